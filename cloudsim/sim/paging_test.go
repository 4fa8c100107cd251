package sim_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Page walks a sorted list by tokens; a token names the last key of its
// page, so that a list that changes between pages neither repeats nor
// skips what stayed.
func TestPage(t *testing.T) {
	id := func(s string) string { return s }
	list := []string{"a", "b", "c", "d", "e"}
	var got []string
	token, pages := "", 0
	for {
		page, next, err := sim.Page(list, id, token, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, pages = append(got, page...), pages+1
		if next == "" {
			break
		}
		token = next
		if pages == 1 {
			list = slices.DeleteFunc(list, func(s string) bool { return s == "b" || s == "c" }) // deleted meanwhile
		}
	}
	if strings.Join(got, ",") != "a,b,d,e" || pages != 2 {
		t.Fatalf("%d pages: %v", pages, got)
	}
	if page, next, err := sim.Page([]string{}, id, "", 10); len(page) != 0 || next != "" || err != nil {
		t.Fatalf("an empty list: %v %q %v", page, next, err)
	}
	if _, _, err := sim.Page(list, id, "not base64!", 2); !errors.Is(err, sim.ErrPageToken) {
		t.Fatalf("a bad token: %v", err)
	}
}

func TestPageSize(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		ok   bool
	}{{"", 10, true}, {"1", 1, true}, {"100", 100, true}, {"0", 0, false}, {"101", 0, false}, {"x", 0, false}, {"-1", 0, false}} {
		if n, ok := sim.PageSize(tc.v, 10, 100); n != tc.want || ok != tc.ok {
			t.Errorf("PageSize(%q) = %d, %v; want %d, %v", tc.v, n, ok, tc.want, tc.ok)
		}
	}
}
