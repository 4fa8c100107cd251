package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSDKCallsDetached: every OCI SDK call is given provider.Detached(ctx),
// never the caller's context: the SDK's common.Retry returns on its
// context's end while its own goroutine still writes the response (a data
// race the race detector caught in ClusterFacts' GetNodePoolOptions).
func TestSDKCallsDetached(t *testing.T) {
	// An SDK request is a value of the SDK's packages (ce.XRequest,
	// core.XRequest, identity.XRequest) or a variable named req.
	bare := regexp.MustCompile(`\.[A-Z]\w*\(ctx, ((ce|core|identity|common)\.[A-Z]\w*Request\b|req\))`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bare.MatchString(line) {
				t.Errorf("%s:%d: an SDK call on the caller's context; give it provider.Detached(ctx): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
