package provider

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// What drivers share: the mapping of a cloud API's HTTP answer to an error
// kind, Retry-After, the comparisons an adoption makes, and counting nodes
// over zones. Nothing here knows a cloud.

// KindOfStatus classifies a failed HTTP call to a provider's API by its
// status: 429 throttled, 404 not found, 400 a validation error, 401/403
// permission denied, 409/412 and 5xx transient (another operation holds the
// pool, or the service is having a bad moment).
func KindOfStatus(status int) Kind {
	switch {
	case status == http.StatusTooManyRequests:
		return KindThrottled
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusBadRequest:
		return KindValidation
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return KindPermissionDenied
	}
	return KindTransient
}

// RetryAfterHeader reads a Retry-After header, in seconds or as an HTTP
// date (relative to now); 0 when absent or unreadable.
func RetryAfterHeader(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// NotFoundError is a driver's answer to an update of a pool the provider
// does not have: noun is what the provider calls a pool ("agent pool").
func NotFoundError(t kpool.PlatformType, noun, providerName string) *Error {
	return &Error{Kind: KindNotFound, Provider: t, Reason: noun + " " + providerName + " not found"}
}

// KeepPlacement returns a copy of labels with the placement labels
// (LabelPool, LabelZone) as the pool at the provider has them (observed):
// an update never changes them, and the caller's map stays as it was.
func KeepPlacement(labels, observed map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range []string{LabelPool, LabelZone} {
		if v, ok := observed[k]; ok {
			out[k] = v
		} else {
			delete(out, k)
		}
	}
	return out
}

// States are a cloud's words for a pool's states, space-separated, by the
// neutral state each is: a driver's table, read by StateOf.
type States struct {
	Ready, Creating, Updating, Deleting, Failed string
}

// Map is the table by the cloud's word.
func (s States) Map() map[string]State {
	out := map[string]State{}
	for st, words := range map[State]string{StateReady: s.Ready, StateCreating: s.Creating, StateUpdating: s.Updating,
		StateDeleting: s.Deleting, StateFailed: s.Failed} {
		for _, w := range strings.Fields(words) {
			out[w] = st
		}
	}
	return out
}

// StateOf is the neutral state of a cloud's word in table (StateUnknown
// for one it does not hold: the controllers wait on it).
func StateOf(word string, table map[string]State) State {
	if st, ok := table[word]; ok {
		return st
	}
	return StateUnknown
}

// SpreadCount divides a pool's node count over its zones as the providers
// that balance a pool across zones do: evenly, the first zones taking one
// more when it does not divide. No zones: nil.
func SpreadCount(count int, zones []string) map[string]int {
	if len(zones) == 0 {
		return nil
	}
	out := make(map[string]int, len(zones))
	for i, z := range zones {
		n := count / len(zones)
		if i < count%len(zones) {
			n++
		}
		out[z] = n
	}
	return out
}

// SameLabels reports whether a pool's labels are want's, ignoring the keys
// in ignore (labels the provider sets itself).
func SameLabels(got, want map[string]string, ignore ...string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && !contains(ignore, k) {
			return false
		}
	}
	return true
}

// SameTaints reports whether two lists hold the same taints, in any order.
func SameTaints(a, b []kpool.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[kpool.Taint]bool{}
	for _, t := range a {
		seen[t] = true
	}
	for _, t := range b {
		if !seen[t] {
			return false
		}
	}
	return true
}

// SameMap reports whether two string maps are equal (nil and empty alike).
func SameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
