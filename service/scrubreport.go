package service

import (
	"encoding/json"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/scrub"
)

// Reports carry the providers' own words (an error body, an operation's
// message), which an endpoint may have filled with what it was sent: a
// bearer token, an API key, a signature. They reach every reader of the
// pool through the API and the dashboard, so they are scrubbed as the log
// is, before they are stored.

// scrubReport hides secrets in a controller report's conditions and in
// every string of its metadata.
func scrubReport(r *kpool.ControllerStatus) {
	r.Conditions = scrubConditions(r.Conditions)
	if len(r.Metadata) == 0 {
		return
	}
	var m any
	if json.Unmarshal(r.Metadata, &m) != nil {
		return // ValidateControllerStatus refuses it
	}
	if clean, changed := scrubValue(m); changed {
		if b, err := json.Marshal(clean); err == nil {
			r.Metadata = b
		}
	}
}

// scrubConditions returns cs with their reasons and messages scrubbed.
func scrubConditions(cs []kpool.Condition) []kpool.Condition {
	out := make([]kpool.Condition, len(cs))
	for i, c := range cs {
		c.Message, c.Reason = scrub.String(c.Message), scrub.String(c.Reason)
		out[i] = c
	}
	return out
}

// scrubValue scrubs every string in a decoded JSON value, keys included,
// and says whether any changed.
func scrubValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := scrub.String(x)
		return s, s != x
	case []any:
		changed := false
		for i := range x {
			var c bool
			x[i], c = scrubValue(x[i])
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, e := range x {
			ne, c := scrubValue(e)
			if nk := scrub.String(k); nk != k {
				delete(x, k)
				k, c = nk, true
			}
			x[k] = ne
			changed = changed || c
		}
		return x, changed
	}
	return v, false
}
