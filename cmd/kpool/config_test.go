package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestMain keeps the tests off the user's own config file. With
// KPOOL_TEST_MAIN=1 the test binary is kpool itself: what a kubeconfig's
// exec plugin runs in TestKubectlThroughKpool.
func TestMain(m *testing.M) {
	if os.Getenv("KPOOL_TEST_MAIN") == "1" {
		main()
	}
	dir, err := os.MkdirTemp("", "kpool-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("KPOOL_CONFIG", filepath.Join(dir, "none.yaml"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestContexts: a context names the server, who you are and a default
// cluster; flags and the environment beat it; it never keeps a token
// itself.
func TestContexts(t *testing.T) {
	srv := newServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	t.Setenv("KPOOL_CONFIG", cfg)
	kpoolCLI := func(args ...string) (string, string, error) { return execute("", args...) }

	if _, _, err := kpoolCLI("config", "set-context", "dev", "--server", srv, "--token", "kpool_secret"); err == nil ||
		!strings.Contains(err.Error(), "does not keep a token in plain text") {
		t.Fatalf("an inline token: %v", err)
	}
	if _, _, err := kpoolCLI("config", "set-context", "dev", "--server", "nope"); err == nil || !strings.Contains(err.Error(), "is not a URL") {
		t.Fatalf("a bad server: %v", err)
	}
	if out, _, err := kpoolCLI("config", "set-context", "dev", "--server", srv, "--user", testUser); err != nil || !strings.Contains(out, `Context "dev" set`) {
		t.Fatalf("set-context: %v %s", err, out)
	}
	id := decode[kpool.Cluster](t, srv, "cluster", "create", "home", "--platform", "gcp", "--project-id", "acme-home", "--location", "us-central1", "--cluster-name", "home").ID
	if _, _, err := kpoolCLI("config", "set-context", "dev", "--cluster", "home"); err != nil {
		t.Fatal(err)
	}
	out, _, err := kpoolCLI("config", "get-contexts")
	if err != nil || !strings.Contains(out, "*   ") || !strings.Contains(out, "dev") || !strings.Contains(out, "home") {
		t.Fatalf("get-contexts: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "kpool_") {
		t.Fatalf("the config holds a token:\n%s", b)
	}
	if st, err := os.Stat(cfg); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode: %v %v", st.Mode(), err)
	}

	// No --server, no --user, no --cluster: the context's.
	out, stderr, err := kpoolCLI("nodepool", "create", "web", "--machine-type", "e2-small", "--count", "1", "-o", "json")
	if err != nil || !strings.Contains(out, id) {
		t.Fatalf("create in the context's cluster: %v\n%s\n%s", err, out, stderr)
	}
	if out, _, err := kpoolCLI("nodepool", "get", "web", "-o", "name"); err != nil || !strings.HasPrefix(out, "nodepool/") {
		t.Fatalf("get by name in the context's cluster: %v %s", err, out)
	}
	// Flags beat the context.
	if _, _, err := kpoolCLI("cluster", "list", "--server", "http://127.0.0.1:1"); err == nil {
		t.Fatal("--server did not beat the context")
	}
	// --context picks another; an unknown one is an error.
	if _, _, err := kpoolCLI("cluster", "list", "--context", "nope"); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Fatalf("--context nope: %v", err)
	}
	// A token from a file.
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("kpool_not-a-real-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kpoolCLI("config", "set-context", "ci", "--server", srv, "--token-file", tokenFile); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kpoolCLI("config", "use-context", "ci"); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := kpoolCLI("config", "current-context"); strings.TrimSpace(out) != "ci" {
		t.Fatalf("current-context: %q", out)
	}
	if _, _, err := kpoolCLI("cluster", "list"); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Fatalf("the token-file's (unknown) token was not sent: %v", err)
	}
	// Deleting the current context leaves none; an unknown one is an error.
	if _, _, err := kpoolCLI("config", "delete-context", "ci"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kpoolCLI("config", "current-context"); err == nil || !strings.Contains(err.Error(), "no current context") {
		t.Fatalf("current-context after deleting it: %v", err)
	}
	if _, _, err := kpoolCLI("config", "delete-context", "ci"); err == nil || !strings.Contains(err.Error(), `no context "ci"`) {
		t.Fatalf("deleting it twice: %v", err)
	}
}
