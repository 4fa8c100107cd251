package kpool

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// UpdateStrategy is how a pool's changes that replace nodes are carried
// out: the surge and unavailability a roll may use, how long a node may
// take to drain and what happens to one that will not, how long new nodes
// soak before old ones go, and whether a change that needs a new pool at
// the provider is carried out (Surge) or refused (Refuse). Mapped onto
// each cloud's own upgrade settings where it has them (provider.Upgrade),
// carried out by kpool's controllers where it does not.
type UpdateStrategy struct {
	// Replacement is Refuse (the default) or Surge.
	Replacement string `json:"replacement,omitempty"`
	// MaxSurge is how many nodes a roll may add beyond the pool's count:
	// a number or a percentage of the count ("1", "33%"); default 1.
	MaxSurge string `json:"maxSurge,omitempty"`
	// MaxUnavailable is how many of the pool's nodes may be out of
	// service (cordoned and draining) at once; default 0 (as many drain
	// at once as new nodes stand ready to take their pods).
	MaxUnavailable string `json:"maxUnavailable,omitempty"`
	// DrainTimeout bounds one node's drain (a Go duration, 1m-24h; default
	// 30m, AKS's default drainTimeoutInMinutes).
	DrainTimeout string `json:"drainTimeout,omitempty"`
	// Soak is how long new nodes run, Ready, before the old ones are
	// removed (0-30m, AKS's nodeSoakDurationInMinutes range; default 0).
	Soak string `json:"soak,omitempty"`
	// OnStuck is what becomes of a node still not drained after
	// DrainTimeout: Stop (the default: the change stops and says what
	// blocks it, as AKS fails an upgrade), Wait (keep trying, as kubectl
	// drain does) or Force (delete its pods past their budgets).
	OnStuck string `json:"onStuck,omitempty"`
}

// Replacement and OnStuck values.
const (
	ReplacementRefuse = "Refuse"
	ReplacementSurge  = "Surge"
	OnStuckStop       = "Stop"
	OnStuckWait       = "Wait"
	OnStuckForce      = "Force"
)

// Strategy defaults and bounds.
const (
	DefaultDrainTimeout = 30 * time.Minute
	MinDrainTimeout     = time.Minute
	MaxDrainTimeout     = 24 * time.Hour
	MaxSoak             = 30 * time.Minute
)

// Surge reports whether replace changes are carried out.
func (u *UpdateStrategy) Surge() bool { return u != nil && u.Replacement == ReplacementSurge }

// Drain returns the drain timeout (the default when unset or invalid).
func (u *UpdateStrategy) Drain() time.Duration {
	if u == nil {
		return DefaultDrainTimeout
	}
	if d, err := time.ParseDuration(u.DrainTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultDrainTimeout
}

// SoakFor returns the soak (0 when unset).
func (u *UpdateStrategy) SoakFor() time.Duration {
	if u == nil {
		return 0
	}
	d, _ := time.ParseDuration(u.Soak)
	return max(d, 0)
}

// Stuck returns what becomes of a node not drained in time.
func (u *UpdateStrategy) Stuck() string {
	if u == nil || u.OnStuck == "" {
		return OnStuckStop
	}
	return u.OnStuck
}

// SurgeOf returns MaxSurge as nodes of a pool of count nodes: at least 1.
func (u *UpdateStrategy) SurgeOf(count int) int {
	if u == nil || u.MaxSurge == "" {
		return 1
	}
	return max(Scaled(u.MaxSurge, count, true), 1)
}

// UnavailableOf returns MaxUnavailable as nodes of a pool of count nodes.
func (u *UpdateStrategy) UnavailableOf(count int) int {
	if u == nil || u.MaxUnavailable == "" {
		return 0
	}
	return Scaled(u.MaxUnavailable, count, false)
}

// Scaled is a number or a percentage of n ("33%": a third of n, rounded
// up or down), as Kubernetes scales a rolling update's maxSurge (up) and
// maxUnavailable (down). Invalid values read as 0.
func Scaled(v string, n int, up bool) int {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		pc, err := strconv.Atoi(p)
		if err != nil {
			return 0
		}
		if up {
			return (pc*n + 99) / 100
		}
		return pc * n / 100
	}
	i, _ := strconv.Atoi(v)
	return i
}

// Describe says a strategy in a plan's words: "surge 1, drain 30m0s".
func (u *UpdateStrategy) Describe() string {
	s := fmt.Sprintf("surge %s, drain %s", orDefault(u.surgeText(), "1"), u.Drain())
	if u.UnavailableOf(100) > 0 {
		s += ", unavailable " + u.MaxUnavailable
	}
	if d := u.SoakFor(); d > 0 {
		s += ", soak " + d.String()
	}
	return s
}

func (u *UpdateStrategy) surgeText() string {
	if u == nil {
		return ""
	}
	return u.MaxSurge
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// validateStrategy checks spec.updateStrategy.
func validateStrategy(fe *FieldErrors, u *UpdateStrategy) {
	if u == nil {
		return
	}
	const f = "spec.updateStrategy."
	switch u.Replacement {
	case "", ReplacementRefuse, ReplacementSurge:
	default:
		fe.Add(f+"replacement", "%q is not one of Refuse, Surge", u.Replacement)
	}
	switch u.OnStuck {
	case "", OnStuckStop, OnStuckWait, OnStuckForce:
	default:
		fe.Add(f+"onStuck", "%q is not one of Stop, Wait, Force", u.OnStuck)
	}
	surge := intOrPercent(fe, f+"maxSurge", u.MaxSurge)
	intOrPercent(fe, f+"maxUnavailable", u.MaxUnavailable)
	if u.MaxSurge != "" && surge == 0 {
		fe.Add(f+"maxSurge", "must be at least 1 (or 1%%): a replacement adds nodes before it removes any")
	}
	if u.DrainTimeout != "" {
		d, err := time.ParseDuration(u.DrainTimeout)
		switch {
		case err != nil:
			fe.Add(f+"drainTimeout", "%q is not a duration such as 30m or 1h", u.DrainTimeout)
		case d < MinDrainTimeout || d > MaxDrainTimeout:
			fe.Add(f+"drainTimeout", "%s is outside 1m to 24h (AKS's drainTimeoutInMinutes takes 1 to 1440)", d)
		}
	}
	if u.Soak != "" {
		d, err := time.ParseDuration(u.Soak)
		switch {
		case err != nil:
			fe.Add(f+"soak", "%q is not a duration such as 5m", u.Soak)
		case d < 0 || d > MaxSoak:
			fe.Add(f+"soak", "%s is outside 0 to 30m (AKS's nodeSoakDurationInMinutes takes 0 to 30)", d)
		}
	}
}

// intOrPercent checks a number or a percentage (0-100%) and returns it
// as given (a percentage's number).
func intOrPercent(fe *FieldErrors, field, v string) int {
	if v == "" {
		return 0
	}
	num, pct := strings.CutSuffix(v, "%")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil || n < 0:
		fe.Add(field, "%q is not a number of nodes or a percentage such as 1 or 33%%", v)
	case pct && n > 100:
		fe.Add(field, "%q is more than 100%%", v)
	case !pct && n > MaxNodes:
		fe.Add(field, "%d is more than %d nodes", n, MaxNodes)
	}
	return max(n, 0)
}
