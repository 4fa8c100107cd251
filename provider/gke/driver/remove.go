package driver

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
	compute "google.golang.org/api/compute/v1"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.NodeRemover = (*Driver)(nil)

// zoneGroup is a node pool's managed instance group in one zone.
type zoneGroup struct {
	svc                 *compute.Service
	project, zone, name string
	base                string // its base instance name: its instances are base-xxxx
	instances           []string
}

// NodePoolRemoveNodes removes the chosen nodes of a node pool and lowers
// its count by as many: Compute Engine's
// instanceGroupManagers.deleteInstances on the pool's group in each of
// their zones, which deletes the instances and reduces the group's
// targetSize by as many. A node is named by its spec.providerID,
// gce://PROJECT/ZONE/INSTANCE (the GCE cloud provider's), or, without
// one, by its name (a GKE node is named as its instance). A node that is
// not the pool's (another project, a zone or an instance name of none of
// its groups) is refused before anything is sent; a node of the pool that
// its group no longer has is skipped (skipInstancesOnValidationError).
// The operations are DONE once the deletions are scheduled (the groups'
// targetSize is then lowered); the instances' deleting shows in the
// groups' currentActions, which the pool's ready count follows.
func (d *Driver) NodePoolRemoveNodes(ctx context.Context, c *kpool.Cluster, providerName string, nodes []provider.NodeRef) error {
	if len(nodes) == 0 {
		return nil
	}
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return err
	}
	np, err := get(ctx, cs, g, providerName)
	if err != nil || np == nil {
		return err // a pool that is gone has none of the nodes left
	}
	groups, err := d.groups(ctx, cs, np.InstanceGroupUrls)
	if err != nil {
		return err
	}
	for i, n := range nodes {
		zg, inst, err := nodeGroup(groups, n)
		if err != nil {
			return provider.ValidationError(platform, fmt.Sprintf("nodes[%d]", i), "node %s is not of node pool %s: %v", n.Name, providerName, err)
		}
		if !slices.Contains(zg.instances, inst) {
			zg.instances = append(zg.instances, inst)
		}
	}
	zones := make([]string, 0, len(groups))
	for z := range groups {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	for _, z := range zones {
		if err := deleteInstances(ctx, groups[z]); err != nil {
			return err
		}
	}
	return nil
}

// groups reads the pool's instance groups (instanceGroupUrls), by zone.
func (d *Driver) groups(ctx context.Context, cs *clients, urls []string) (map[string]*zoneGroup, error) {
	out := map[string]*zoneGroup{}
	for _, u := range urls {
		origin, project, zone, name, ok := groupOf(u)
		if !ok {
			return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform, Reason: "GKE names an instance group URL the driver cannot read: " + u}
		}
		svc, err := d.computeFor(ctx, cs, origin)
		if err != nil {
			return nil, err
		}
		mig, err := svc.InstanceGroupManagers.Get(project, zone, name).Context(ctx).Do()
		if err != nil {
			return nil, classify(err, "")
		}
		base := mig.BaseInstanceName
		if base == "" {
			base = strings.TrimSuffix(name, "-grp")
		}
		out[zone] = &zoneGroup{svc: svc, project: project, zone: zone, name: name, base: base}
	}
	return out, nil
}

// nodeGroup is the pool's group a node's instance is of, and the
// instance's name; an error says why it is of none.
func nodeGroup(groups map[string]*zoneGroup, n provider.NodeRef) (*zoneGroup, string, error) {
	if n.ProviderID == "" {
		for _, zg := range groups {
			if strings.HasPrefix(n.Name, zg.base+"-") {
				return zg, n.Name, nil
			}
		}
		return nil, "", fmt.Errorf("no providerID, and its name is of none of the pool's instance groups")
	}
	rest, ok := strings.CutPrefix(n.ProviderID, "gce://")
	seg := strings.Split(rest, "/")
	if !ok || len(seg) != 3 || seg[0] == "" || seg[1] == "" || seg[2] == "" {
		return nil, "", fmt.Errorf("providerID %q is not gce://PROJECT/ZONE/INSTANCE", n.ProviderID)
	}
	zg, ok := groups[seg[1]]
	switch {
	case !ok:
		return nil, "", fmt.Errorf("zone %s is none of the pool's", seg[1])
	case seg[0] != zg.project:
		return nil, "", fmt.Errorf("project %s is not the pool's, %s", seg[0], zg.project)
	case !strings.HasPrefix(seg[2], zg.base+"-"):
		return nil, "", fmt.Errorf("instance %s is not of the pool's instance group %s", seg[2], zg.name)
	}
	return zg, seg[2], nil
}

// deleteInstances deletes a group's chosen instances, skipping those it
// no longer has. The request id makes a retried request the same one.
func deleteInstances(ctx context.Context, zg *zoneGroup) error {
	if len(zg.instances) == 0 {
		return nil
	}
	req := &compute.InstanceGroupManagersDeleteInstancesRequest{SkipInstancesOnValidationError: true}
	for _, in := range zg.instances {
		req.Instances = append(req.Instances, "zones/"+zg.zone+"/instances/"+in)
	}
	op, err := zg.svc.InstanceGroupManagers.DeleteInstances(zg.project, zg.zone, zg.name, req).RequestId(uuid.NewString()).Context(ctx).Do()
	if err != nil {
		return classify(err, "")
	}
	if op.Error != nil && len(op.Error.Errors) > 0 {
		e := op.Error.Errors[0]
		return &provider.Error{Kind: provider.KindTransient, Provider: platform, Code: e.Code,
			Reason: fmt.Sprintf("deleting instances of instance group %s failed: %s", zg.name, provider.FirstLine(e.Message))}
	}
	return nil
}
