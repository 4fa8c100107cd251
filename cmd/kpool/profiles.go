package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/poolspec"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// profiles are every platform kpool knows: the CLI builds requests and
// explains plans from them.
var profiles = catalog.Registry()

// specs makes the spec of nodepool create, update and scale from their
// flags, with the profiles.
var specs = poolspec.NewBuilder(profiles)

// platformNames lists the platforms, comma-separated.
func platformNames() string {
	var names []string
	for _, t := range profiles.Types() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// platformFlag is a `cluster create` flag that sets a field of the cluster
// blocks of some platforms.
type platformFlag struct {
	name, field string
	platforms   []kpool.PlatformType
	usage       string
	isMap       bool
}

// clusterPlatformFlags are the profiles' cluster flags, one per name: a
// flag several platforms share (--region) is listed once with each
// platform's usage.
func clusterPlatformFlags() []platformFlag {
	var out []platformFlag
	for _, p := range profiles.Profiles() {
		for _, f := range p.CLI().ClusterFlags {
			i := slices.IndexFunc(out, func(x platformFlag) bool { return x.name == f.Name })
			if i < 0 {
				out = append(out, platformFlag{name: f.Name, field: f.Field, isMap: f.Map})
				i = len(out) - 1
			}
			if out[i].field != f.Field || out[i].isMap != f.Map {
				panic(fmt.Sprintf("flag --%s sets %s on %s but %s elsewhere", f.Name, f.Field, p.Type(), out[i].field))
			}
			out[i].platforms = append(out[i].platforms, p.Type())
			if !strings.Contains(out[i].usage, f.Usage) {
				out[i].usage = strings.TrimPrefix(out[i].usage+"; "+f.Usage, "; ")
			}
		}
	}
	return out
}

func (p platformFlag) allows(t kpool.PlatformType) bool { return slices.Contains(p.platforms, t) }

// clusterFlagsHelp is the help's list of each platform's cluster flags.
func clusterFlagsHelp() string {
	var b strings.Builder
	var none []string
	for _, p := range profiles.Profiles() {
		flags := p.CLI().ClusterFlags
		if len(flags) == 0 {
			none = append(none, string(p.Type()))
			continue
		}
		fmt.Fprintf(&b, "  %-6s", string(p.Type())+":")
		for _, f := range flags {
			s := "--" + f.Name
			if f.Map {
				s += " " + strings.SplitN(f.Usage, ",", 2)[0] + " ..."
			}
			if f.Optional {
				s = "[" + s + "]"
			}
			b.WriteString(" " + s)
		}
		b.WriteString("\n")
	}
	if len(none) > 0 {
		fmt.Fprintf(&b, "  %s: no settings\n", strings.Join(none, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// poolNoun is what a provider calls a node pool.
func poolNoun(t kpool.PlatformType) string { return profiles.Profile(t).CLI().PoolNoun }

// poolFields are the block fields the neutral pool flags set on platform t.
func poolFields(t kpool.PlatformType) provider.PoolFields {
	return profiles.Profile(t).CLI().PoolFields
}

// machineFields lists each platform's machine type field ("gcp
// machineType, …").
func machineFields() string {
	var out []string
	for _, p := range profiles.Profiles() {
		if f := p.CLI().PoolFields.MachineType; f != "" {
			out = append(out, string(p.Type())+" "+f)
		}
	}
	return strings.Join(out, ", ")
}
