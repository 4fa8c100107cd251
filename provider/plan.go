package provider

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/kpool/kpool"
)

// fieldValue is one provider-neutral field of a spec: which Field it is,
// where it sits in the spec, and its value.
type fieldValue struct {
	field Field
	path  string
	value any
}

// fieldsOf lists a spec's fields in a fixed order: the neutral ones, then
// the platform block's. Zones are logical, so a change from "us-west-2a" to
// zone "1" is no change.
func fieldsOf(p Profile, c *kpool.Cluster, s *kpool.NodePoolSpec) ([]fieldValue, error) {
	zones, zonePath, err := PoolZones(p, c, s)
	if err != nil {
		return nil, err
	}
	b := p.Block(c, s)
	// The autoscaler's bounds, and apart from them its targets and delays,
	// which a provider may take only cluster-wide.
	bounds, tuning := s.Autoscaling, kpool.Autoscaling{}
	if a := s.Autoscaling; a != nil {
		tuning = *a
		bounds = &kpool.Autoscaling{Enabled: a.Enabled, MinNodes: a.MinNodes, MaxNodes: a.MaxNodes}
	}
	if !s.Autoscaling.On() && !p.Capabilities().Autoscaling {
		// "enabled: false" asks nothing of a provider without autoscaling.
		bounds = nil
	}
	out := []fieldValue{
		{FieldCount, "spec.nodeCount", s.Count()},
		{FieldAutoscaling, "spec.autoscaling", bounds},
		{FieldAutoscalerTuning, "spec.autoscaling.targetCPUUtilization", tuning.TargetCPUUtilization},
		{FieldAutoscalerTuning, "spec.autoscaling.targetMemoryUtilization", tuning.TargetMemoryUtilization},
		{FieldAutoscalerTuning, "spec.autoscaling.scaleDownDelay", tuning.ScaleDownDelay},
		{FieldAutoscalerTuning, "spec.autoscaling.scaleUpDelay", tuning.ScaleUpDelay},
		{FieldMachineType, b.Path(FieldMachineType), b.MachineType},
		{FieldZones, zonePath, zones},
		{FieldLabels, "spec.labels", Labels(b, s)},
		{FieldTaints, "spec.taints", Taints(b, s)},
		{FieldVersion, "spec.kubernetesVersion", s.KubernetesVersion},
		{FieldTags, "spec.tags", s.Tags},
		{FieldMode, "spec.mode", s.Mode},
		{FieldPlacementPool, "spec.placementPool", s.PlacementPool},
		{FieldUpgrade, "spec.updateStrategy", cloudStrategy(s.UpdateStrategy)},
	}
	for _, f := range b.Fields {
		switch f.Field {
		case FieldMachineType, FieldZones, FieldLabels, FieldTaints:
			// above, in neutral terms
		default:
			out = append(out, fieldValue{f.Field, f.Path, f.Value})
		}
	}
	return out, nil
}

// cloudStrategy is the part of an update strategy a cloud's upgrade
// settings take, as the spec writes it (a plan row shows it): all but
// replacement, which is kpool's alone.
func cloudStrategy(u *kpool.UpdateStrategy) *kpool.UpdateStrategy {
	if u == nil {
		return nil
	}
	v := *u
	v.Replacement = ""
	if v == (kpool.UpdateStrategy{}) {
		return nil
	}
	return &v
}

// set reports whether a value asks for something (is not its zero value).
func set(v any) bool {
	if v == nil {
		return false
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Map, reflect.Slice:
		return r.Len() > 0
	case reflect.Pointer:
		return !r.IsNil()
	}
	return !r.IsZero()
}

// sameJSON reports whether two values encode alike (nil and empty maps
// included).
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// CheckCreate refuses a new pool's spec where it asks for a capability the
// provider lacks (NOT_IMPLEMENTED) or names zones the cluster cannot map.
func (r *Registry) CheckCreate(c *kpool.Cluster, s *kpool.NodePoolSpec) error {
	p := r.Profile(c.Spec.Platform.Type)
	t := p.Type()
	caps := p.Capabilities()
	if !caps.NodePools {
		return APIError(NoPoolsError(p, "nodepool create"))
	}
	fields, err := fieldsOf(p, c, s)
	if err != nil {
		return err
	}
	var missing []string
	for _, f := range fields {
		u := caps.Updates[f.field]
		if u.Class == kpool.UpdateNotImplemented && set(f.value) && f.field != FieldMode {
			missing = append(missing, f.path+": "+u.Reason)
		}
	}
	if s.Autoscaling.On() && !caps.Autoscaling && caps.Updates[FieldAutoscaling].Class != kpool.UpdateNotImplemented {
		missing = append(missing, "spec.autoscaling: "+noAutoscaling(caps))
	}
	if len(missing) > 0 {
		return &kpool.Error{Code: kpool.CodeNotImplemented, Message: "Not implemented by " + string(t), Details: strings.Join(missing, "; ")}
	}
	return nil
}

// Plan classifies every field that differs between old and next.
func (r *Registry) Plan(c *kpool.Cluster, old, next *kpool.NodePoolSpec) (kpool.Plan, error) {
	p := r.Profile(c.Spec.Platform.Type)
	t := p.Type()
	caps := p.Capabilities()
	plan := kpool.Plan{Provider: string(t), Changes: []kpool.Change{}}
	if !caps.NodePools {
		return plan, APIError(NoPoolsError(p, "nodepool update"))
	}
	before, err := fieldsOf(p, c, old)
	if err != nil {
		return plan, err
	}
	after, err := fieldsOf(p, c, next)
	if err != nil {
		return plan, err
	}
	was := map[string]any{}
	for _, f := range before {
		was[string(f.field)+" "+f.path] = f.value
	}
	for _, f := range after {
		from, ok := was[string(f.field)+" "+f.path]
		if !ok {
			// The field moved (zones from the block to spec.zones): compare
			// by field, not path.
			for _, b := range before {
				if b.field == f.field && b.field == FieldZones {
					from = b.value
				}
			}
		}
		if sameJSON(from, f.value) {
			continue
		}
		u := caps.Updates[f.field]
		if f.field == FieldPlacementPool {
			u = placementRule
		}
		if f.field == FieldAutoscaling && next.Autoscaling.On() && !caps.Autoscaling {
			u = NotSupported(noAutoscaling(caps))
		}
		plan.Changes = append(plan.Changes, kpool.Change{Field: f.path, Class: u.Class, From: from, To: f.value, Reason: u.Reason})
	}
	return plan, nil
}

// ProviderNames lists the names the pool may have at its provider (see
// ProviderNames).
func (r *Registry) ProviderNames(c *kpool.Cluster, pool string, n int) ([]string, error) {
	names, err := ProviderNames(r.Profile(c.Spec.Platform.Type).Capabilities(), pool, n)
	return names, APIError(err)
}

// noAutoscaling says why a provider without autoscaling has none, and what
// to do instead when its capabilities say.
func noAutoscaling(caps Capabilities) string {
	if u := caps.Updates[FieldAutoscaling]; u.Class == kpool.UpdateNotImplemented {
		return u.Reason
	}
	return string(caps.Provider) + " has no autoscaling"
}
