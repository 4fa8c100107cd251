package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
)

// Bounds of a logical pool's capacity policy.
const (
	minUnavailableFor = 10 * time.Second
	maxMinMove        = time.Hour
	maxNameLen        = 63 // a pool name's (a DNS-1035 label)
)

// checkLogical checks a logical pool against its cluster: its name, counts
// and capacity policy, and its template and fallbacks as the member pools
// they make would be checked, each error naming the logical pool's field.
// The template's platform type defaults to the cluster's.
func (s *Service) checkLogical(ctx context.Context, c *kpool.Cluster, lp *kpool.LogicalPool, op string) error {
	if pl, ok := s.Platforms.Platform(c.Spec.Platform.Type); !ok {
		return &kpool.Error{Code: kpool.CodeNotImplemented, Message: fmt.Sprintf("Platform %q has no node pools", c.Spec.Platform.Type),
			Details: fmt.Sprintf("cluster %s runs on %s, which kpool does not know", c.Name, c.Spec.Platform.Type)}
	} else if !pl.HasNodePools() {
		return pl.NoPools(op)
	}
	if lp.Spec.Template.Platform.Type == "" {
		// The offerings are read through the platform's profile.
		lp.Spec.Template.Platform.Type = c.Spec.Platform.Type
	}
	var fe kpool.FieldErrors
	kpool.ValidateName(&fe, "name", lp.Name)
	sp := &lp.Spec
	checkLogicalCounts(&fe, sp)
	checkCapacity(&fe, sp.Capacity)
	t := &sp.Template
	for _, f := range []struct {
		name string
		set  bool
	}{{"nodeCount", t.NodeCount != nil}, {"autoscaling", t.Autoscaling != nil}, {"placementPool", t.PlacementPool != ""}} {
		if f.set {
			fe.Add("spec.template."+f.name, "set on the logical pool, not its template")
		}
	}
	if t.Observed() {
		fe.Add("spec.template.management", "the members a logical pool makes are managed: kpool creates and scales them")
	}
	for _, f := range blockZones(t) {
		fe.Add("spec.template.platform."+f, "zones are the logical pool's: use spec.template.zones (logical zones 1, 2, 3…)")
	}
	if err := fe.Err(); err != nil {
		return err
	}
	return s.checkAlternatives(ctx, c, lp)
}

func checkLogicalCounts(fe *kpool.FieldErrors, sp *kpool.LogicalPoolSpec) {
	if a := sp.Autoscaling; a.On() {
		switch {
		case a.MinNodes == nil:
			fe.Add("spec.autoscaling.minNodes", "required when autoscaling is enabled")
		case a.MaxNodes == nil:
			fe.Add("spec.autoscaling.maxNodes", "required when autoscaling is enabled")
		case *a.MinNodes < 0 || *a.MaxNodes > kpool.MaxNodes:
			fe.Add("spec.autoscaling", "minNodes and maxNodes must be between 0 and %d", kpool.MaxNodes)
		case *a.MinNodes > *a.MaxNodes:
			fe.Add("spec.autoscaling.minNodes", "must not exceed maxNodes (%d), got %d", *a.MaxNodes, *a.MinNodes)
		case sp.NodeCount != nil:
			fe.Add("spec.nodeCount", "not with autoscaling: the autoscaler owns the count within minNodes and maxNodes")
		}
		return
	}
	switch {
	case sp.NodeCount == nil:
		fe.Add("spec.nodeCount", "required: the total node count over the members (or autoscaling with minNodes and maxNodes)")
	case *sp.NodeCount < 0 || *sp.NodeCount > kpool.MaxNodes:
		fe.Add("spec.nodeCount", "must be between 0 and %d, got %d", kpool.MaxNodes, *sp.NodeCount)
	}
}

func checkCapacity(fe *kpool.FieldErrors, c *kpool.CapacityPolicy) {
	if c == nil {
		return
	}
	for _, d := range []struct {
		field, v string
		lo, hi   time.Duration
	}{{"unavailableFor", c.UnavailableFor, minUnavailableFor, kpool.MaxUnavailableFor}, {"minMoveInterval", c.MinMoveInterval, 0, maxMinMove}} {
		if d.v == "" {
			continue
		}
		dur, err := time.ParseDuration(d.v)
		switch {
		case err != nil:
			fe.Add("spec.capacity."+d.field, "%q is not a duration such as 30s, 3m or 1h", d.v)
		case dur < d.lo || dur > d.hi:
			fe.Add("spec.capacity."+d.field, "must be between %v and %v, got %s", d.lo, d.hi, d.v)
		}
	}
}

// blockZones names the zone lists a spec's platform block sets (BLOCK.zones,
// BLOCK.availabilityZones…), read from its JSON so that no cloud is named.
func blockZones(t *kpool.NodePoolSpec) []string {
	raw, err := json.Marshal(t.Platform)
	var blocks map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range kpool.SortedKeys(blocks) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(blocks[b], &fields) != nil {
			continue
		}
		for _, f := range kpool.SortedKeys(fields) {
			l := strings.ToLower(f)
			if strings.HasSuffix(l, "zones") || strings.HasSuffix(l, "availabilitydomains") {
				out = append(out, b+"."+f)
			}
		}
	}
	return out
}

// checkAlternatives checks the template as a pool in all its zones, then
// every offering of every alternative as the member it makes. A fault is
// reported once, at the first field of the logical pool that causes it.
func (s *Service) checkAlternatives(ctx context.Context, c *kpool.Cluster, lp *kpool.LogicalPool) error {
	var fe kpool.FieldErrors
	seen := map[string]bool{}
	add := func(field, reason string) {
		if k := field + "\x00" + reason; !seen[k] {
			seen[k] = true
			fe.Add(field, "%s", reason)
		}
	}
	whole := lp.Spec.Template
	whole.Zones = slices.Clone(whole.Zones)
	perZone := max(1, len(whole.Zones)) // a node a zone: what every provider takes
	whole.NodeCount = &perZone
	if err := s.checkMember(ctx, c, lp, lp.Name, whole); err != nil {
		if !mapFields(err, add, func(f string) string { return "spec.template." + strings.TrimPrefix(f, "spec.") }) {
			return err
		}
		return fe.Err() // the fallbacks' faults would only repeat the template's
	}
	alts := lp.Spec.Alternatives(s.Platforms, c)
	for _, a := range alts {
		for _, o := range a.Offerings {
			if n := lp.MemberName(o.Zone, a.Rank); len(n) > maxNameLen {
				add("name", fmt.Sprintf("too long: its member %s would have %d characters, over the %d of a pool name", n, len(n), maxNameLen))
			}
		}
	}
	if err := fe.Err(); err != nil {
		return err
	}
	for _, a := range alts {
		for j, b := range alts[:a.Rank] {
			if a.Rank > 0 && slices.Equal(a.Offerings, b.Offerings) {
				add(fmt.Sprintf("spec.fallbacks[%d]", a.Rank-1), "the same offerings as "+altName(j)+": a fallback must change the machine type, the zones or spot")
			}
		}
		for _, o := range a.Offerings {
			err := s.checkMember(ctx, c, lp, lp.MemberName(o.Zone, a.Rank), s.memberSpec(c, lp, o))
			if err != nil && !mapFields(err, add, func(f string) string { return altField(lp, a.Rank, f) }) {
				return err
			}
		}
	}
	return fe.Err()
}

func altName(rank int) string {
	if rank == 0 {
		return "the template"
	}
	return fmt.Sprintf("fallback %d", rank-1)
}

// altField maps a member's field to the logical pool field that set it:
// the template's, or what a fallback changes.
func altField(lp *kpool.LogicalPool, rank int, f string) string {
	switch {
	case f == "name":
		return "name"
	case rank == 0 && strings.HasPrefix(f, "spec.zones"):
		return "spec.template.zones"
	case rank == 0:
		return "spec.template." + strings.TrimPrefix(f, "spec.")
	}
	fb := lp.Spec.Fallbacks[rank-1]
	p := fmt.Sprintf("spec.fallbacks[%d]", rank-1)
	switch {
	case strings.HasPrefix(f, "spec.zones") && len(fb.Zones) > 0:
		return p + ".zones"
	case fb.MachineType != "":
		return p + ".machineType"
	case fb.Spot != nil:
		return p + ".spot"
	}
	return p + ".zones"
}

// mapFields adds a VALIDATION_ERROR's fields to add, renamed by field, and
// reports whether err was one.
func mapFields(err error, add func(field, reason string), field func(string) string) bool {
	var e *kpool.Error
	if !errors.As(err, &e) || e.Code != kpool.CodeValidation {
		return false
	}
	if len(e.Fields) == 0 {
		add(field("spec"), e.Details)
	}
	for _, f := range e.Fields {
		reason := f.Reason
		if mapped := field(f.Field); mapped != f.Field && !strings.HasPrefix(mapped, "spec.template.") {
			reason = f.Field + ": " + reason
		}
		add(field(f.Field), reason)
	}
	return true
}

// memberSpec is the spec of the member a logical pool makes for an
// offering: the template pointed at it, in the logical pool, one node (the
// counts are the layout's).
func (s *Service) memberSpec(c *kpool.Cluster, lp *kpool.LogicalPool, o kpool.Offering) kpool.NodePoolSpec {
	var spec kpool.NodePoolSpec
	raw, _ := json.Marshal(lp.Spec.Template)
	_ = json.Unmarshal(raw, &spec)
	s.Platforms.SetOffering(c, &spec, o)
	spec.PlacementPool = lp.Name
	return spec
}

// checkMember checks a member's spec as a pool create checks a pool's.
func (s *Service) checkMember(ctx context.Context, c *kpool.Cluster, lp *kpool.LogicalPool, name string, spec kpool.NodePoolSpec) error {
	if spec.NodeCount == nil {
		one := 1
		spec.NodeCount = &one
	}
	spec.PlacementPool = lp.Name
	p := &kpool.NodePool{Name: name, ClusterID: c.ID, Spec: spec}
	s.defaults(&p.Spec, c)
	if err := kpool.ValidateNodePool(s.Platforms, p, c); err != nil {
		return err
	}
	if err := s.Platforms.CheckCreate(c, &p.Spec); err != nil {
		return err
	}
	_, err := s.preflight(ctx, c, &p.Spec, nil)
	return err
}
