package audit

import (
	"testing"
)

// FuzzDecodeEventCursor: an events page's cursor from a client never panics
// the decoder, an accepted one is a positive id, and ids round-trip.
func FuzzDecodeEventCursor(f *testing.F) {
	f.Add(EncodeCursor(1))
	f.Add(EncodeCursor(9223372036854775807))
	for _, s := range []string{"", "ev.", "ZXYuMA", "ZXYuLTE", "ZXYuMTJ4", "bogus", "===="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := DecodeCursor(s)
		if err != nil {
			return
		}
		if id <= 0 {
			t.Fatalf("DecodeCursor(%q) accepted %d", s, id)
		}
		if again, err := DecodeCursor(EncodeCursor(id)); err != nil || again != id {
			t.Fatalf("id %d does not survive a round trip: %d, %v", id, again, err)
		}
	})
}
