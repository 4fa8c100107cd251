package poolspec

import (
	"fmt"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// object is the updateStrategy object of the settings given. The
// enumerations are taken in any case (--replacement surge) and sent as the
// API spells them; a value that is not one, or a duration that does not
// parse, is refused naming its flag. Ranges are the server's to check.
func (s Strategy) object() (map[string]any, error) {
	u := map[string]any{}
	for _, e := range []struct {
		flag, field string
		v           *string
		one         []string
	}{
		{"replacement", "replacement", s.Replacement, []string{kpool.ReplacementRefuse, kpool.ReplacementSurge}},
		{"on-stuck", "onStuck", s.OnStuck, []string{kpool.OnStuckStop, kpool.OnStuckWait, kpool.OnStuckForce}},
	} {
		if e.v == nil {
			continue
		}
		v, ok := oneOf(*e.v, e.one)
		if !ok {
			return nil, fmt.Errorf("--%s %q: use %s", e.flag, *e.v, strings.Join(e.one, " or "))
		}
		u[e.field] = v
	}
	for _, d := range []struct {
		flag, field string
		v           *string
	}{{"drain-timeout", "drainTimeout", s.DrainTimeout}, {"soak", "soak", s.Soak}} {
		if d.v == nil {
			continue
		}
		if _, err := time.ParseDuration(*d.v); err != nil {
			return nil, fmt.Errorf("--%s %q: give a duration such as 30m or 1h", d.flag, *d.v)
		}
		u[d.field] = *d.v
	}
	for _, n := range []struct {
		flag, field string
		v           *string
	}{{"max-surge", "maxSurge", s.MaxSurge}, {"max-unavailable", "maxUnavailable", s.MaxUnavailable}} {
		if n.v != nil {
			u[n.field] = *n.v
		}
	}
	return u, nil
}

// oneOf finds v among one, ignoring case, and returns it as one spells it.
func oneOf(v string, one []string) (string, bool) {
	for _, o := range one {
		if strings.EqualFold(v, o) {
			return o, true
		}
	}
	return v, false
}
