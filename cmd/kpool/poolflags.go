package main

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/poolspec"
)

// poolFlags are the spec flags of nodepool create and update. What they
// mean on each platform is poolspec's: settings hands it the flags given.
type poolFlags struct {
	machineType, mode, version  string
	count, min, max, diskSize   int
	zones, labels, taints, tags []string
	spot                        bool
	// strategy are spec.updateStrategy's flags, by flag name.
	strategy map[string]*string
	// own are the providers' own flags' values (*string, *float64 or
	// *bool), by flag name.
	own map[string]any
}

func (f *poolFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.machineType, "machine-type", "", "machine type (the platform block's "+machineFields()+")")
	fs.IntVar(&f.count, "count", 0, "number of nodes (with autoscaling, the starting size)")
	registerBounds(fs, &f.min, &f.max)
	fs.StringSliceVar(&f.zones, "zones", nil, "zones, comma-separated: logical 1,2,3 (or <region>-1…), or the provider's own (us-central1-a, us-west-2a, AD-1); not civo")
	fs.IntVar(&f.diskSize, "disk-size", 0, "boot disk size in GB (not civo)")
	fs.BoolVar(&f.spot, "spot", false, "spot or preemptible nodes (not civo)")
	fs.StringArrayVar(&f.labels, "label", nil, "Kubernetes node label KEY=VALUE (repeatable)")
	fs.StringArrayVar(&f.taints, "taint", nil, "node taint KEY=VALUE:EFFECT or KEY:EFFECT (repeatable; replaces the pool's taints)")
	fs.StringVar(&f.mode, "mode", "", "pool mode: system or user")
	fs.StringVar(&f.version, "kubernetes-version", "", "Kubernetes version of the nodes, such as 1.30")
	fs.StringArrayVar(&f.tags, "tag", nil, "cloud resource tag KEY=VALUE (repeatable)")
	f.strategy = map[string]*string{}
	for _, sf := range strategyFlags {
		f.strategy[sf.name] = fs.String(sf.name, "", sf.usage)
	}
	f.own = map[string]any{}
	for _, of := range specs.OwnFlags() {
		usage := of.Usage + " (" + strings.Join(typeNames(of.Platforms), ", ") + " only)"
		switch of.Kind {
		case "bool":
			f.own[of.Name] = fs.Bool(of.Name, false, usage)
		case "number":
			f.own[of.Name] = fs.Float64(of.Name, 0, usage)
		default:
			f.own[of.Name] = fs.String(of.Name, "", usage)
		}
	}
}

// settings are the flags given on the command line.
func (f *poolFlags) settings(fs *pflag.FlagSet) *poolspec.Settings {
	s := &poolspec.Settings{Own: map[string]any{}}
	given := fs.Changed
	if given("count") {
		s.NodeCount = &f.count
	}
	s.MinNodes, s.MaxNodes = bounds(fs, &f.min, &f.max)
	if given("mode") {
		s.Mode = &f.mode
	}
	if given("kubernetes-version") {
		s.KubernetesVersion = &f.version
	}
	if given("label") {
		s.Labels = nonNil(f.labels)
	}
	if given("tag") {
		s.Tags = nonNil(f.tags)
	}
	if given("taint") {
		s.Taints = nonNil(f.taints)
	}
	if given("machine-type") {
		s.MachineType = &f.machineType
	}
	if given("zones") {
		s.Zones = nonNil(f.zones)
	}
	if given("disk-size") {
		s.DiskSize = &f.diskSize
	}
	if given("spot") {
		s.Spot = &f.spot
	}
	s.Strategy = poolspec.Strategy{Replacement: f.given(fs, "replacement"), MaxSurge: f.given(fs, "max-surge"),
		MaxUnavailable: f.given(fs, "max-unavailable"), DrainTimeout: f.given(fs, "drain-timeout"), Soak: f.given(fs, "soak"),
		OnStuck: f.given(fs, "on-stuck")}
	for name, v := range f.own {
		if !given(name) {
			continue
		}
		switch v := v.(type) {
		case *bool:
			s.Own[name] = *v
		case *float64:
			s.Own[name] = *v
		case *string:
			s.Own[name] = *v
		}
	}
	return s
}

// strategyFlags are spec.updateStrategy's flags.
var strategyFlags = []struct{ name, usage string }{
	{"replacement", "Surge: carry out a change that needs a new pool (a successor pool is created, the nodes drained onto it, the old pool deleted); Refuse (the default): refuse it"},
	{"max-surge", "nodes a roll or replacement may add beyond the count: a number or a percentage (default 1)"},
	{"max-unavailable", "nodes that may be cordoned and draining at once: a number or a percentage (default 0)"},
	{"drain-timeout", "how long one node's drain may take, 1m to 24h (default 30m)"},
	{"soak", "how long new nodes run Ready before old ones are removed, 0 to 30m (default 0)"},
	{"on-stuck", "a node not drained after --drain-timeout: Stop (the default: stop and say what blocks), Wait or Force"},
}

// given is the strategy flag name's value when it is given, or nil.
func (f *poolFlags) given(fs *pflag.FlagSet, name string) *string {
	if !fs.Changed(name) {
		return nil
	}
	return f.strategy[name]
}

// nonNil is vs, or an empty list for nil: a flag given, with no value.
func nonNil(vs []string) []string {
	if vs == nil {
		return []string{}
	}
	return vs
}

func typeNames(ts []kpool.PlatformType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func registerBounds(fs *pflag.FlagSet, min, max *int) {
	fs.IntVar(min, "min", 0, "autoscaling minimum (enables autoscaling)")
	fs.IntVar(max, "max", 0, "autoscaling maximum (enables autoscaling)")
}

// bounds are the --min and --max given (nil for one not given).
func bounds(fs *pflag.FlagSet, min, max *int) (*int, *int) {
	if !fs.Changed("min") {
		min = nil
	}
	if !fs.Changed("max") {
		max = nil
	}
	return min, max
}

// scaleSpec is the spec of a scale: --count, or --min and --max (the
// autoscaling bounds), of a pool or a logical pool.
func scaleSpec(fs *pflag.FlagSet, count, min, max *int) (json.RawMessage, error) {
	if !anyChanged(fs, "count", "min", "max") {
		return nil, errors.New("give --count N, or --min N and --max N to change the autoscaling bounds")
	}
	s := poolspec.Settings{}
	if fs.Changed("count") {
		s.NodeCount = count
	}
	s.MinNodes, s.MaxNodes = bounds(fs, min, max)
	spec, err := specs.Spec(&s, poolspec.Target{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(spec)
}
