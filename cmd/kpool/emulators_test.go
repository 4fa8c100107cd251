package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// TestEmulatorFlags: --emulators with --emulator-ca gives every cloud's
// emulator identity to the clusters at those origins, and the pair is
// refused half given or with a file that holds no certificate.
func TestEmulatorFlags(t *testing.T) {
	dir := t.TempDir()
	ca, err := sim.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	good, bad := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(good, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		urls, ca, want string
	}{
		{"", good, "--emulator-ca without --emulators"},
		{"https://127.0.0.1:1", "", "give --emulator-ca too"},
		{"https://127.0.0.1:1", bad, "no PEM certificate"},
		{"https://127.0.0.1:1", filepath.Join(dir, "missing.pem"), "--emulator-ca"},
	} {
		var f serveFlags
		f.emu = emulatorFlags{urls: tc.urls, ca: tc.ca}
		if _, err := f.emu.use(&f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--emulators %q --emulator-ca %q: error %v, want one saying %q", tc.urls, tc.ca, err, tc.want)
		}
	}
	var f serveFlags
	f.emu = emulatorFlags{urls: "https://127.0.0.1:1, https://127.0.0.1:2", ca: good}
	tr, err := f.emu.use(&f)
	if err != nil || tr == nil {
		t.Fatalf("use: %v, %v", tr, err)
	}
	if len(f.emulators) != len(clouds.All()) || len(f.extraEndpoints) != 2 {
		t.Errorf("identities %d (want %d), endpoints %q", len(f.emulators), len(clouds.All()), f.extraEndpoints)
	}
	if _, err := f.cloud(); err != nil {
		t.Errorf("cloud(): %v", err)
	}
	var none serveFlags
	if tr, err := none.emu.use(&none); err != nil || tr != cloudTransport || none.emulators != nil {
		t.Errorf("without --emulators: %v, %v, %v", tr, err, none.emulators)
	}
}
