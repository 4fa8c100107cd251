package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
)

// TestDevMoverFrom checks which clusters kpool dev takes to be on an
// earlier run's emulator: with a record, those at a recorded origin of
// their platform; without one (a run before the record was kept), those
// on loopback at no allowed origin.
func TestDevMoverFrom(t *testing.T) {
	const a, b = kpool.PlatformType("cloud-a"), kpool.PlatformType("cloud-b")
	now := map[kpool.PlatformType]string{a: "https://127.0.0.1:2001", b: "https://127.0.0.1:2002"}
	rec := &emulatorRecord{Emulators: map[kpool.PlatformType][]string{a: {"https://127.0.0.1:1001"}, b: {"https://127.0.0.1:1002"}}}
	gone := time.Now()
	for _, tc := range []struct {
		name     string
		before   *emulatorRecord
		platform kpool.PlatformType
		endpoint string
		deleting bool
		want     string
	}{
		{"recorded", rec, a, "https://127.0.0.1:1001", false, "https://127.0.0.1:1001"},
		{"recorded, with a path", rec, a, "https://127.0.0.1:1001/arm", false, "https://127.0.0.1:1001"},
		{"another platform's emulator", rec, a, "https://127.0.0.1:1002", false, ""},
		{"this run's emulator", rec, a, "https://127.0.0.1:2001", false, ""},
		{"loopback, not recorded", rec, a, "https://127.0.0.1:3000", false, ""},
		{"being deleted", rec, a, "https://127.0.0.1:1001", true, ""},
		{"no endpoint", rec, a, "", false, ""},
		{"a platform without an emulator", rec, "cloud-c", "https://127.0.0.1:1001", false, ""},
		{"no record: loopback", nil, a, "https://127.0.0.1:3000", false, "https://127.0.0.1:3000"},
		{"no record: localhost", nil, b, "https://localhost:3000/x", false, "https://localhost:3000"},
		{"no record: IPv6 loopback", nil, b, "https://[::1]:3000", false, "https://[::1]:3000"},
		{"no record: a public host", nil, a, "https://arm.example.com", false, ""},
		{"no record: an allowed origin", nil, a, "https://127.0.0.1:8443", false, ""},
		{"no record: http", nil, a, "http://127.0.0.1:3000", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &emulatorMover{now: now, before: tc.before, allowed: []string{"https://127.0.0.1:8443"}}
			c := &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{Endpoint: tc.endpoint, Platform: kpool.ClusterPlatform{Type: tc.platform}}}
			if tc.deleting {
				c.DeletionTimestamp = &gone
			}
			if got := m.from(c); got != tc.want {
				t.Errorf("from %q: %q, want %q", tc.endpoint, got, tc.want)
			}
		})
	}
}

// TestDevEmulatorRecord checks that the record reads back as written, that
// none is nil, and that a damaged one is an error naming the file.
func TestDevEmulatorRecord(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dev-emulators.json")
	if r, err := readEmulatorRecord(file); r != nil || err != nil {
		t.Fatalf("no record: %v, %v", r, err)
	}
	want := &emulatorRecord{Emulators: map[kpool.PlatformType][]string{"cloud-a": {"https://127.0.0.1:1001", "https://127.0.0.1:999"}}}
	if err := writeEmulatorRecord(file, want); err != nil {
		t.Fatal(err)
	}
	if got, err := readEmulatorRecord(file); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, %v", got, err)
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readEmulatorRecord(file); err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("a damaged record: %v", err)
	}
}

// TestDevShellWord checks the quoting of paths the banner prints.
func TestDevShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"sqlite:/home/me/.local/share/kpool/dev.db":             "sqlite:/home/me/.local/share/kpool/dev.db",
		"/Users/me/Library/Application Support/kpool/dev.token": "'/Users/me/Library/Application Support/kpool/dev.token'",
		"it's": `'it'\''s'`,
		"":     "''",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
