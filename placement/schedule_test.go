package placement

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

func TestTolerated(t *testing.T) {
	t.Parallel()
	taint := kpool.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: kpool.EffectNoSchedule}
	tol := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tt := range []struct {
		name string
		tol  map[string]any
		want bool
	}{
		{"equal", tol("key", "nvidia.com/gpu", "operator", "Equal", "value", "present", "effect", "NoSchedule"), true},
		{"operator defaults to Equal", tol("key", "nvidia.com/gpu", "value", "present"), true},
		{"other value", tol("key", "nvidia.com/gpu", "value", "absent"), false},
		{"exists", tol("key", "nvidia.com/gpu", "operator", "Exists"), true},
		{"other effect", tol("key", "nvidia.com/gpu", "operator", "Exists", "effect", "NoExecute"), false},
		{"everything", tol("operator", "Exists"), true},
		{"no key, Equal", tol("value", "present"), false},
		{"other key", tol("key", "gpu", "operator", "Exists"), false},
	} {
		if got := tolerated([]any{tt.tol}, taint); got != tt.want {
			t.Errorf("%s: tolerated %v = %v, want %v", tt.name, tt.tol, got, tt.want)
		}
	}
}

func TestReadApp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want Intent
		err  string
	}{
		{"spec: {deployment: {pool: gpu, zone: 1}}", Intent{Pool: "gpu", Zone: "1"}, ""},
		{"spec: {deployment: {pools: [user, spot, user], zones: '1, 2'}}", Intent{Pools: []string{"user", "spot"}, Zones: []string{"1", "2"}}, ""},
		{"spec: {compose: x}", Intent{}, "has no spec.deployment"},
		{"spec: {deployment: {pool: [a]}}", Intent{}, "spec.deployment.pool: is a []interface {}, not a name"},
		{"spec: {deployment: {zones: {a: 1}}}", Intent{}, "spec.deployment.zones: is a map[string]interface {}, not a list of names"},
		{"[unclosed", Intent{}, "not YAML or JSON"},
	} {
		got, err := ReadApp("", []byte(tt.in))
		if tt.err != "" {
			if err == nil || !contains(err, tt.err) {
				t.Errorf("%s: %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !equal(got, tt.want) {
			t.Errorf("%s: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// contains reports whether a field error of err, as "field: reason",
// holds s.
func contains(err error, s string) bool {
	var e *kpool.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, f := range e.Fields {
		if strings.Contains(f.Field+": "+f.Reason, s) {
			return true
		}
	}
	return false
}

func equal(a, b Intent) bool {
	return a.Pool == b.Pool && a.Zone == b.Zone && slices.Equal(a.Pools, b.Pools) && slices.Equal(a.Zones, b.Zones)
}
