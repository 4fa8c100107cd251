package driver

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
)

// Instance statuses the driver reads. Anything else (SHUTOFF, REBOOTING,
// ...) is a node that is not up.
const (
	statusActive   = "ACTIVE"
	statusBuilding = "BUILDING"
	statusDeleting = "DELETING"
	statusError    = "ERROR"
	statusFailed   = "FAILED"
)

// createdTogether is how close the instances of a pool that is still
// being created were made: Civo builds a new pool's nodes at once, a scale
// adds its nodes later.
const createdTogether = time.Minute

// observe maps a Civo pool to the neutral observed pool. Civo's pools have
// no status: the pool's state is derived from its instances.
func observe(p *Pool) provider.Pool {
	out := provider.Pool{
		PoolSpec: provider.PoolSpec{
			ProviderName: p.ID,
			MachineType:  p.Size,
			Count:        p.Count,
			Mode:         kpool.ModeUser,
		},
		Extra: map[string]string{},
	}
	out.Labels, out.Owner = provider.LabelKeys.Take(p.Labels)
	out.Name = out.Labels[provider.LabelPool]
	for _, t := range p.Taints {
		out.Taints = append(out.Taints, kpool.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	// Reported either way, so that a spec asking for the other is seen
	// to differ (provider.Compare).
	out.Settings = map[string]string{civo.SettingPublicIP: strconv.FormatBool(p.PublicIPNodePool)}
	if p.Region != "" {
		out.Extra["region"] = p.Region
	}

	counts := map[string]int{}
	var names, failed []string
	var first, last time.Time
	for _, in := range p.Instances {
		st := strings.ToUpper(in.Status)
		counts[st]++
		name := in.Hostname
		if name == "" {
			name = in.ID
		}
		names = append(names, name)
		if st == statusError || st == statusFailed {
			failed = append(failed, name)
		}
		if !in.CreatedAt.IsZero() {
			if first.IsZero() || in.CreatedAt.Before(first) {
				first = in.CreatedAt
			}
			if in.CreatedAt.After(last) {
				last = in.CreatedAt
			}
		}
	}
	if len(names) > 0 {
		out.Extra["instances"] = strings.Join(names, ",")
	}
	// A node whose build failed (for want of capacity too) is no node.
	active, total := counts[statusActive], len(p.Instances)
	out.Nodes, out.ReadyNodes = total-len(failed), active
	out.ProviderState = summary(counts)
	switch {
	case len(failed) > 0:
		out.State = provider.StateFailed
		out.Message = fmt.Sprintf("%d of %d nodes failed (%s); the next update asks Civo for the pool's %d nodes again",
			len(failed), total, strings.Join(failed, ", "), p.Count)
	case total > 0 && counts[statusDeleting] == total:
		out.State = provider.StateDeleting
	case active == p.Count && total == p.Count:
		out.State = provider.StateReady
	case counts[statusDeleting] > 0:
		out.State = provider.StateUpdating // scaling down
	case active == 0, total == p.Count && last.Sub(first) < createdTogether:
		// A new pool: its nodes were all made by its create.
		out.State = provider.StateCreating
	default:
		out.State = provider.StateUpdating
	}
	out.Problems = provider.CheckContract(&out)
	return out
}

// summary is the instances' statuses, the nearest thing to a pool status
// Civo has: ACTIVE=2,BUILDING=1.
func summary(counts map[string]int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	return strings.Join(parts, ",")
}

// civoOwned reports whether a label or taint key is in a domain Civo sets
// itself.
func civoOwned(key string) bool {
	return kpool.ReservedDomain(key, profile.LabelDomains()) != ""
}

// ownLabels drops the labels Civo sets itself.
func ownLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !civoOwned(k) {
			out[k] = v
		}
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
