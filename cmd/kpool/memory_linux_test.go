package main

import "testing"

// TestReleaseExecutable: the start's pages of the running executable are
// released (fewer of its bytes resident afterwards), only read-only
// mappings are advised, and the code still runs: the pages come back from
// the file on their next touch.
func TestReleaseExecutable(t *testing.T) {
	before, err := exeMappings()
	if err != nil {
		t.Fatal(err)
	}
	var readOnly int
	for _, m := range before {
		if !m.writable {
			readOnly++
		}
	}
	if readOnly < 2 {
		t.Fatalf("found %d read-only mappings of the executable, want its code and its read-only data: %+v", readOnly, before)
	}
	released, err := releaseExecutable()
	if err != nil {
		t.Fatal(err)
	}
	if released <= 0 || released > resident(before) {
		t.Errorf("released %d bytes of %d resident", released, resident(before))
	}
	after, err := exeMappings()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("mappings %d before, %d after", len(before), len(after))
	}
	if n, err := releaseExecutable(); err != nil || n < 0 {
		t.Errorf("second release: %d, %v", n, err)
	}
}
