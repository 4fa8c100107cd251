package provider_test

import (
	"errors"
	"testing"

	"github.com/kpool/kpool/provider"
)

// TestCache: a full cache forgets the least recently used entry.
func TestCache(t *testing.T) {
	c := provider.NewCache[int](3)
	for i, k := range []string{"a", "b", "c"} {
		c.Add(k, i)
	}
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Add("d", 3) // forgets b, the least recently used
	if _, ok := c.Get("b"); ok || c.Len() != 3 {
		t.Fatalf("b kept or len %d", c.Len())
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf("%s forgotten", k)
		}
	}
	c.Add("c", 9)
	if v, _ := c.Get("c"); v != 9 || c.Len() != 3 {
		t.Fatalf("c = %d, len %d", v, c.Len())
	}
	c.Remove("c")
	if _, ok := c.Get("c"); ok || c.Len() != 2 {
		t.Fatal("c not removed")
	}
}

// TestCacheLoad: a value is made once and kept; a failed make keeps
// nothing.
func TestCacheLoad(t *testing.T) {
	c := provider.NewCache[string](2)
	made := 0
	mk := func() (string, error) { made++; return "v", nil }
	for range 3 {
		if v, err := c.Load("k", mk); v != "v" || err != nil {
			t.Fatalf("Load: %q, %v", v, err)
		}
	}
	if made != 1 {
		t.Fatalf("made %d times, want 1", made)
	}
	boom := errors.New("boom")
	if _, err := c.Load("x", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("Load of a failing make: %v", err)
	}
	if _, ok := c.Get("x"); ok {
		t.Fatal("a failed make was kept")
	}
}
