package driver

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
)

// A list pass reads the instance groups of all its pools at once: one
// Compute instanceGroupManagers.aggregatedList per project (one page per
// 500 groups), not a get per group, so that a settled cluster costs the
// same calls whatever its number of pools (issue 37).

// groupRef names one instance group: the Compute origin and project its
// URL names, its zone and its name.
type groupRef struct{ origin, project, zone, name string }

// refOf parses an instance group URL (groupOf).
func refOf(u string) (groupRef, bool) {
	origin, project, zone, name, ok := groupOf(u)
	return groupRef{origin, project, zone, name}, ok
}

// scope is the origin and project one aggregated list reads.
type scope struct{ origin, project string }

// groupSet is what one read of a cluster's instance groups found.
type groupSet struct {
	d  *Driver
	cs *clients
	// found are the groups the lists answered; zones the zones whose
	// answers were whole (a list, or NO_RESULTS_ON_PAGE), so that a group
	// of such a zone that was not found is gone.
	found map[groupRef]*compute.InstanceGroupManager
	zones map[groupRef]bool // by origin, project and zone (no name)
	// failed are the lists that failed, by scope: their groups are read
	// one by one, or fail with the list's error.
	failed map[scope]error
}

// readGroups reads every instance group the pools name, one aggregated
// list per origin and project, filtered to the names' common prefix
// (Compute's regular-expression filter, `name eq "PREFIX.*"`: the
// cluster's groups are gke-CLUSTER-POOL-HASH-grp, so other clusters'
// seldom come along, and are ignored when they do).
func (d *Driver) readGroups(ctx context.Context, cs *clients, nps []*container.NodePool) *groupSet {
	gs := &groupSet{d: d, cs: cs, found: map[groupRef]*compute.InstanceGroupManager{}, zones: map[groupRef]bool{}, failed: map[scope]error{}}
	names := map[scope][]string{}
	for _, np := range nps {
		if np == nil {
			continue
		}
		for _, u := range np.InstanceGroupUrls {
			if r, ok := refOf(u); ok {
				k := scope{r.origin, r.project}
				names[k] = append(names[k], r.name)
			}
		}
	}
	for k, ns := range names {
		if err := gs.list(ctx, k, ns); err != nil {
			gs.failed[k] = err
		}
	}
	return gs
}

// list reads one scope's groups whose names start as all of names do.
func (gs *groupSet) list(ctx context.Context, k scope, names []string) error {
	svc, err := gs.d.computeFor(ctx, gs.cs, k.origin)
	if err != nil {
		return err
	}
	call := svc.InstanceGroupManagers.AggregatedList(k.project).Context(ctx)
	if p := commonPrefix(names); p != "" {
		call = call.Filter(`name eq "` + regexp.QuoteMeta(p) + `.*"`)
	}
	return call.Pages(ctx, func(l *compute.InstanceGroupManagerAggregatedList) error {
		for key, sl := range l.Items {
			zone, ok := strings.CutPrefix(key, "zones/")
			if !ok {
				continue // a region's groups: GKE's node pools have zonal ones
			}
			// A zone is whole if no page warned of it otherwise.
			whole := sl.Warning == nil || sl.Warning.Code == "NO_RESULTS_ON_PAGE"
			if z := (groupRef{k.origin, k.project, zone, ""}); !whole || !gs.known(z) {
				gs.zones[z] = whole
			}
			for _, g := range sl.InstanceGroupManagers {
				if g != nil {
					gs.found[groupRef{k.origin, k.project, zone, g.Name}] = g
				}
			}
		}
		for _, u := range l.Unreachables {
			if zone, ok := strings.CutPrefix(u, "zones/"); ok {
				gs.zones[groupRef{k.origin, k.project, zone, ""}] = false
			}
		}
		return nil
	})
}

// known reports whether a zone is in zones, whole or not.
func (gs *groupSet) known(z groupRef) bool {
	_, ok := gs.zones[z]
	return ok
}

// group is one instance group as the lists found it; nil when it is gone
// (its zone answered without it). A group of a zone the lists did not
// answer for whole (unreachable, or a warning), or of a scope whose list
// was refused permission, is read on its own (instanceGroupManagers.get).
func (gs *groupSet) group(ctx context.Context, r groupRef) (*compute.InstanceGroupManager, error) {
	if g, ok := gs.found[r]; ok {
		return g, nil
	}
	err := gs.failed[scope{r.origin, r.project}]
	switch {
	case err == nil && gs.zones[groupRef{r.origin, r.project, r.zone, ""}]:
		return nil, nil
	case err != nil && !denied(err):
		return nil, classify(err, "")
	}
	svc, err := gs.d.computeFor(ctx, gs.cs, r.origin)
	if err != nil {
		return nil, err
	}
	g, err := svc.InstanceGroupManagers.Get(r.project, r.zone, r.name).Context(ctx).Do()
	switch {
	case groupGone(err):
		return nil, nil
	case err != nil:
		return nil, classify(err, "")
	}
	return g, nil
}

// denied reports whether err is Compute's 403: a credential that may get
// instance groups but not list them (compute.instanceGroupManagers.list)
// still counts nodes, a call per group.
func denied(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusForbidden
}

// commonPrefix is the longest prefix all names share.
func commonPrefix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	p := names[0]
	for _, n := range names[1:] {
		i := 0
		for i < len(p) && i < len(n) && p[i] == n[i] {
			i++
		}
		p = p[:i]
	}
	return p
}
