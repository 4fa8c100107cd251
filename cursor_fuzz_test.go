package kpool

import (
	"testing"
	"time"
)

// FuzzDecodeCursor: a cursor from a client never panics DecodeCursor, and
// one it accepts encodes back to a cursor that decodes to the same position.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor(Cursor{CreatedAt: time.Unix(1_700_000_000, 123_456_000).UTC(), ID: "550e8400-e29b-41d4-a716-446655440000"}))
	f.Add(EncodeCursor(Cursor{CreatedAt: time.UnixMicro(-1).UTC(), ID: "550e8400-e29b-41d4-a716-446655440000"}))
	for _, s := range []string{"", "x", "MTIz", "====", "LjU1MGU4NDAwLWUyOWItNDFkNC1hNzE2LTQ0NjY1NTQ0MDAwMA", "OTIyMzM3MjAzNjg1NDc3NTgwOC54"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := DecodeCursor(s)
		if err != nil {
			if c != nil {
				t.Fatalf("DecodeCursor(%q) returned a cursor with its error", s)
			}
			return
		}
		if !IsUUID(c.ID) {
			t.Fatalf("DecodeCursor(%q) accepted the id %q", s, c.ID)
		}
		again, err := DecodeCursor(EncodeCursor(*c))
		if err != nil || !again.CreatedAt.Equal(c.CreatedAt) || again.ID != c.ID {
			t.Fatalf("cursor %q: %+v does not survive a round trip (%+v, %v)", s, c, again, err)
		}
	})
}

// FuzzValidateTaints: taints from a request never panic validation, and
// every problem names a field under spec.taints with a reason.
func FuzzValidateTaints(f *testing.F) {
	for _, s := range [][3]string{
		{"workload-type", "gpu", "NoSchedule"}, {"dedicated", "", "NoExecute"}, {"a", "x", "NoWay"}, {"", "", ""},
		{"example.com/a", "b", "PreferNoSchedule"}, {"a b", "x y", "NoSchedule"}, {"kubernetes.io/x", "v", "NoSchedule"},
	} {
		f.Add(s[0], s[1], s[2], 2)
	}
	f.Fuzz(func(t *testing.T, key, value, effect string, n int) {
		n = min(max(n, 0), 60)
		ts := make([]Taint, n)
		for i := range ts {
			ts[i] = Taint{Key: key, Value: value, Effect: effect}
		}
		var fe FieldErrors
		ValidateTaints(&fe, "spec.taints", ts)
		for _, e := range fe {
			if e.Reason == "" || len(e.Field) < len("spec.taints") || e.Field[:len("spec.taints")] != "spec.taints" {
				t.Fatalf("problem %+v for %d× %q=%q:%q", e, n, key, value, effect)
			}
		}
		if n > 1 && len(fe) == 0 {
			t.Fatalf("%d identical taints %q=%q:%q were accepted", n, key, value, effect)
		}
	})
}
