// Package crossclient runs the clouds' own JavaScript clients
// (cloudsim/clients, installed by npm ci there) against the emulators in
// tests: each emulator is checked with a client kpool did not write.
package crossclient

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Required is the environment variable that makes a missing node or
// missing clients a failure rather than a skip (.ci/run sets it).
const Required = "KPOOL_CROSS_CLIENTS"

// Dir is the clients' folder, cloudsim/clients.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "clients")
}

// Node runs node on script (a file in Dir) with env added to the test's
// environment and returns what it printed on stdout; the test fails with
// its stderr when it exits non-zero. Without node or the installed clients
// the test is skipped, saying what is missing (failed when Required is
// set).
func Node(t testing.TB, script string, env ...string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed (apt-get install nodejs npm)")
	}
	if _, err := os.Stat(filepath.Join(Dir(), "node_modules")); err != nil {
		missing(t, "the clouds' clients are not installed: run npm ci in cloudsim/clients (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(Dir(), script))
	cmd.Dir = Dir()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// CAFile writes pem (the emulator's CA certificate) to a file of the test's
// and returns its path, for NODE_EXTRA_CA_CERTS.
func CAFile(t testing.TB, pem []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(Required) != "" {
		t.Fatalf("%s; %s is set, so the cross-client tests must run", why, Required)
	}
	t.Skip(why)
}
