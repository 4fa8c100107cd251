package gke

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEnumTable checks the enum table against its sources: each field's
// values against the discovery document of the container/v1 client in the
// module cache, each number against the proto @google-cloud/container
// ships (when cloudsim/clients is installed).
func TestEnumTable(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	if err != nil {
		t.Skipf("no module directory for google.golang.org/api: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "container", "v1", "container-api.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schemas map[string]struct {
			Properties map[string]struct {
				Enum  []string `json:"enum"`
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"properties"`
		} `json:"schemas"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	proto, _ := os.ReadFile(filepath.Join("..", "clients", "node_modules", "@google-cloud", "container", "build", "protos", "google", "container", "v1", "cluster_service.proto"))
	for key, e := range enums {
		schema, fieldName, _ := strings.Cut(key, ".")
		p := doc.Schemas[schema].Properties[fieldName]
		want := append(p.Enum, p.Items.Enum...)
		for _, v := range e.Values {
			if !slices.Contains(want, v.Name) {
				t.Errorf("%s: %s is not among the discovery document's values %v", key, v.Name, want)
			}
			if len(proto) > 0 && !regexp.MustCompile(`(?m)^\s*`+v.Name+`\s*=\s*`+itoa(v.Number)+`\b`).Match(proto) {
				t.Errorf("%s: the proto has no %s = %d", key, v.Name, v.Number)
			}
		}
	}
	if len(enums) < 90 {
		t.Fatalf("%d enum fields, want the discovery document's", len(enums))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
