package provider

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/kpool/kpool"
)

// Planner implements kpool.Planner from the capabilities table.
type Planner struct{}

var _ kpool.Planner = Planner{}

// fieldValue is one provider-neutral field of a spec: which Field it is,
// where it sits in the spec, and its value.
type fieldValue struct {
	field Field
	path  string
	value any
}

// fieldsOf lists a spec's fields in a fixed order. Zones are logical, so a
// change from "us-west-2a" to zone "1" is no change.
func fieldsOf(c *kpool.Cluster, s *kpool.NodePoolSpec) ([]fieldValue, error) {
	zones, zonePath, err := PoolZones(c, s)
	if err != nil {
		return nil, err
	}
	machine, machinePath := s.MachineType()
	out := []fieldValue{
		{FieldCount, "spec.nodeCount", s.Count()},
		{FieldAutoscaling, "spec.autoscaling", s.Autoscaling},
		{FieldMachineType, machinePath, machine},
		{FieldZones, zonePath, zones},
		{FieldLabels, "spec.labels", s.AllLabels()},
		{FieldTaints, "spec.taints", s.AllTaints()},
		{FieldVersion, "spec.kubernetesVersion", s.KubernetesVersion},
		{FieldTags, "spec.tags", s.Tags},
		{FieldMode, "spec.mode", s.Mode},
	}
	add := func(f Field, path string, v any) { out = append(out, fieldValue{f, path, v}) }
	switch p := s.Platform; {
	case p.GCP != nil:
		add(FieldSpot, "spec.platform.gcp.preemptible", p.GCP.Preemptible)
		add(FieldDisk, "spec.platform.gcp.diskSize", p.GCP.DiskSize)
		add(FieldDisk, "spec.platform.gcp.diskType", p.GCP.DiskType)
		add(FieldAccelerators, "spec.platform.gcp.accelerators", p.GCP.Accelerators)
	case p.AWS != nil:
		add(FieldSpot, "spec.platform.aws.spotInstances", p.AWS.SpotInstances)
		add(FieldDisk, "spec.platform.aws.volumeSize", p.AWS.VolumeSize)
		add(FieldDisk, "spec.platform.aws.volumeType", p.AWS.VolumeType)
		add(FieldImage, "spec.platform.aws.userData", p.AWS.UserData)
	case p.Azure != nil:
		add(FieldSpot, "spec.platform.azure.spotInstances", p.Azure.SpotInstances)
		add(FieldDisk, "spec.platform.azure.osDiskSizeGB", p.Azure.OSDiskSizeGB)
		add(FieldDisk, "spec.platform.azure.osDiskType", p.Azure.OSDiskType)
	case p.OCI != nil:
		add(FieldSpot, "spec.platform.oci.preemptible", p.OCI.Preemptible)
		add(FieldDisk, "spec.platform.oci.bootVolumeSizeInGBs", p.OCI.BootVolumeSizeInGBs)
		add(FieldImage, "spec.platform.oci.imageId", p.OCI.ImageID)
		add(FieldImage, "spec.platform.oci.ocpus", p.OCI.OCPUs)
		add(FieldImage, "spec.platform.oci.memoryInGBs", p.OCI.MemoryInGBs)
	}
	return out, nil
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

func same(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// CheckCreate refuses a new pool's spec where it asks for a capability the
// provider lacks (NOT_IMPLEMENTED) or names zones the cluster cannot map.
func (Planner) CheckCreate(c *kpool.Cluster, s *kpool.NodePoolSpec) error {
	t := c.Spec.Platform.Type
	caps := CapabilitiesOf(t)
	if !caps.NodePools {
		return APIError(NotImplemented(t, "platform %s has no node pools", t))
	}
	fields, err := fieldsOf(c, s)
	if err != nil {
		return err
	}
	var missing []string
	for _, f := range fields {
		u := caps.Updates[f.field]
		if u.Class == kpool.NotImplemented && set(f.value) && f.field != FieldMode {
			missing = append(missing, f.path+": "+u.Reason)
		}
	}
	if s.Autoscaling.On() && !caps.Autoscaling {
		missing = append(missing, "spec.autoscaling: "+string(t)+" has no autoscaling")
	}
	if len(missing) > 0 {
		return &kpool.Error{Code: kpool.CodeNotImplemented, Message: "Not implemented by " + string(t), Details: strings.Join(missing, "; ")}
	}
	return checkZones(c, s)
}

// checkZones makes sure every zone can be placed: on EKS the cluster needs
// a subnet in the zone.
func checkZones(c *kpool.Cluster, s *kpool.NodePoolSpec) error {
	if c.Spec.Platform.Type != kpool.PlatformAWS {
		return nil
	}
	zones, field, err := PoolZones(c, s)
	if err != nil {
		return err
	}
	var fe kpool.FieldErrors
	for _, z := range zones {
		if _, err := Subnet(c, z); err != nil {
			fe.Add(field, "%v", err)
		}
	}
	return fe.Err()
}

// Subnet returns an EKS cluster's subnet for a logical zone, from its subnet
// map keyed by zone name (us-west-2a) or zone id (usw2-az1).
func Subnet(c *kpool.Cluster, logical string) (string, error) {
	a := c.Spec.Platform.AWS
	if a == nil {
		return "", fmt.Errorf("cluster %s is not on aws", c.Name)
	}
	name, err := ProviderZone(c, logical)
	if err != nil {
		return "", err
	}
	if id, ok := a.Subnets[name]; ok {
		return id, nil
	}
	for key, id := range a.Subnets {
		if m := azIDRE.FindStringSubmatch(key); m != nil && m[1] == logical {
			return id, nil
		}
	}
	return "", fmt.Errorf("zone %s (%s) has no subnet in cluster %s's subnets", logical, name, c.Name)
}

// Plan classifies every field that differs between old and next.
func (Planner) Plan(c *kpool.Cluster, old, next *kpool.NodePoolSpec) (kpool.Plan, error) {
	t := c.Spec.Platform.Type
	caps := CapabilitiesOf(t)
	plan := kpool.Plan{Provider: string(t), Changes: []kpool.Change{}}
	if !caps.NodePools {
		return plan, APIError(NotImplemented(t, "platform %s has no node pools", t))
	}
	before, err := fieldsOf(c, old)
	if err != nil {
		return plan, err
	}
	after, err := fieldsOf(c, next)
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
		if same(from, f.value) {
			continue
		}
		u := caps.Updates[f.field]
		if f.field == FieldAutoscaling && next.Autoscaling.On() && !caps.Autoscaling {
			u = Update{kpool.NotImplemented, string(t) + " has no autoscaling"}
		}
		plan.Changes = append(plan.Changes, kpool.Change{Field: f.path, Class: u.Class, From: from, To: f.value, Reason: u.Reason})
	}
	if err := checkZones(c, next); err != nil {
		return plan, err
	}
	return plan, nil
}

// ProviderNames lists the names the pool may have at its provider (see
// ProviderNames).
func (Planner) ProviderNames(c *kpool.Cluster, pool string, n int) ([]string, error) {
	names, err := ProviderNames(c.Spec.Platform.Type, pool, n)
	return names, APIError(err)
}
