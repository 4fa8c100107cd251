package placement

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// FuzzPlace: manifests from a request never panic Place, with or without a
// cluster to check against; a refusal is a VALIDATION_ERROR naming fields,
// and a placement is YAML that places the same again. The seed corpus is
// every golden case's input.
func FuzzPlace(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		if filepath.Base(name) == "clusters.yaml" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, true)
	}
	f.Add([]byte("kind: Pod\n"), false)
	f.Add([]byte("a: &a [*a, *a]\n"), false)
	f.Add([]byte("---\n---\n"), true)
	prod := clusters(f)["prod"]
	f.Fuzz(func(t *testing.T, manifests []byte, withCluster bool) {
		o := Options{DefaultPool: DefaultPool}
		if withCluster {
			o.Cluster = prod
		}
		var res *Result
		var err error
		done := make(chan struct{})
		go func() { defer close(done); res, err = Place(manifests, o) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Place has run 5s on %d bytes:\n%q", len(manifests), manifests)
		}
		if err != nil {
			var e *kpool.Error
			if !errors.As(err, &e) || e.Code != kpool.CodeValidation || len(e.Fields) == 0 {
				t.Fatalf("Place refused with %v, want a VALIDATION_ERROR naming fields", err)
			}
			return
		}
		if _, err := Place([]byte(res.Manifests), o); err != nil {
			t.Fatalf("Place's own output is refused: %v\ninput:\n%s\noutput:\n%s", err, manifests, res.Manifests)
		}
	})
}
