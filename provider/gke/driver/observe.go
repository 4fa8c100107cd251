package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// gkeBuild is the -gke.N build suffix of a GKE version.
var gkeBuild = regexp.MustCompile(`-gke\.\d+$`)

// kpoolEffects are GKE's taint effects as kpool names them.
var kpoolEffects = map[string]string{"NO_SCHEDULE": kpool.EffectNoSchedule, "PREFER_NO_SCHEDULE": kpool.EffectPreferNoSchedule, "NO_EXECUTE": kpool.EffectNoExecute}

// observe maps a node pool to the neutral observed pool, all but its node
// counts, which are its instance groups' (count).
func observe(c *kpool.Cluster, np *container.NodePool) provider.Pool {
	cfg := np.Config
	if cfg == nil {
		cfg = &container.NodeConfig{}
	}
	p := provider.Pool{
		PoolSpec: provider.PoolSpec{
			ProviderName: np.Name, MachineType: cfg.MachineType, DiskSizeGB: int(cfg.DiskSizeGb), DiskType: cfg.DiskType,
			Spot: cfg.Spot || cfg.Preemptible, Labels: map[string]string{}, Tags: map[string]string{},
			Version: gkeBuild.ReplaceAllString(np.Version, ""), Mode: kpool.ModeUser,
		},
		ProviderState: np.Status, Message: np.StatusMessage,
		Extra: map[string]string{"version": np.Version, "etag": np.Etag},
	}
	for k, v := range cfg.Labels {
		p.Labels[k] = v
	}
	p.Name = p.Labels[provider.LabelPool]
	p.Tags, p.Owner = provider.TagKeys.Take(cfg.ResourceLabels)
	for _, t := range cfg.Taints {
		if t == nil {
			continue
		}
		e, ok := kpoolEffects[t.Effect]
		if !ok {
			e = t.Effect
		}
		p.Taints = append(p.Taints, kpool.Taint{Key: t.Key, Value: t.Value, Effect: e})
	}
	for _, a := range cfg.Accelerators {
		if a != nil {
			p.Accelerators = append(p.Accelerators, kpool.Accelerator{Type: a.AcceleratorType, Count: int(a.AcceleratorCount)})
		}
	}
	p.Taints = profile.NodeTaints(provider.PoolSpec{Taints: p.Taints, Accelerators: p.Accelerators})
	for _, z := range np.Locations {
		if l, err := profile.LogicalZone(c, z); err == nil {
			p.Zones = append(p.Zones, l)
		} else {
			p.Zones = append(p.Zones, z) // a zone kpool cannot name: shown as GKE has it
		}
	}
	sort.Strings(p.Zones)
	if a := np.Autoscaling; a != nil && a.Enabled {
		p.Autoscaling = true
		if a.TotalMaxNodeCount > 0 {
			p.MinCount, p.MaxCount = int(a.TotalMinNodeCount), int(a.TotalMaxNodeCount)
		} else {
			n := max(len(np.Locations), 1)
			p.MinCount, p.MaxCount = int(a.MinNodeCount)*n, int(a.MaxNodeCount)*n
		}
	}
	if m := np.Management; m != nil {
		p.Extra["autoUpgrade"] = fmt.Sprint(m.AutoUpgrade)
	} else {
		p.Extra["autoUpgrade"] = "false"
	}
	observeUpgrade(&p, np.UpgradeSettings)
	if np.SelfLink != "" {
		p.Extra["selfLink"] = np.SelfLink
	}
	p.State = state(np.Status)
	if p.State == provider.StateFailed && p.Message == "" {
		for _, cond := range np.Conditions {
			if cond != nil && cond.Message != "" {
				p.Message = cond.Message
			}
		}
	}
	p.Problems = provider.CheckContract(&p)
	return p
}

// state maps GKE's NodePool.status to the neutral state. RUNNING_WITH_ERROR
// is Failed: the pool runs, but the last operation did not finish, and the
// controllers apply the spec again.
func state(s string) provider.State { return provider.StateOf(s, states) }

var states = provider.States{Ready: "RUNNING", Creating: "PROVISIONING", Updating: "RECONCILING", Deleting: "STOPPING",
	Failed: "ERROR RUNNING_WITH_ERROR"}.Map()

// count reads one pool's node counts (countIn), its instance groups read
// for it alone.
func (d *Driver) count(ctx context.Context, cs *clients, c *kpool.Cluster, np *container.NodePool, p *provider.Pool) error {
	return countIn(ctx, d.readGroups(ctx, cs, []*container.NodePool{np}), c, np, p)
}

// countIn reads a pool's node counts from its managed instance groups
// (one per zone, which instanceGroupUrls name) as gs found them: the
// count is their target sizes, the ready nodes those with no action under
// way. A failed pool's nodes are the instances its groups have (target
// less those still being created: a group short of capacity keeps
// creating them); while the pool runs, the count.
func countIn(ctx context.Context, gs *groupSet, c *kpool.Cluster, np *container.NodePool, p *provider.Pool) error {
	p.NodesByZone = map[string]int{}
	creating := 0
	for _, u := range np.InstanceGroupUrls {
		r, ok := refOf(u)
		if !ok {
			p.ReadyUnknown = true
			continue
		}
		g, err := gs.group(ctx, r)
		if err != nil {
			return err
		}
		if g == nil {
			// The group went ahead of its pool (a delete under way, or a
			// create that failed): it has no nodes to count, and its pool
			// must not fail the whole cluster's list as if the cluster were
			// not there.
			continue
		}
		p.Count += int(g.TargetSize)
		ready := 0
		if a := g.CurrentActions; a != nil {
			ready = int(a.None)
			creating += int(a.Creating + a.CreatingWithoutRetries)
		}
		p.ReadyNodes += ready
		l, err := profile.LogicalZone(c, r.zone)
		if err != nil {
			l = r.zone
		}
		p.NodesByZone[l] += ready
	}
	p.Nodes = p.Count
	if p.State == provider.StateFailed {
		p.Nodes = max(p.Count-creating, 0)
	}
	return nil
}

// groupOf parses an instance group URL: ORIGIN/compute/v1/projects/P/zones/Z/instanceGroupManagers/N.
func groupOf(raw string) (origin, project, zone, name string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", "", "", false
	}
	seg := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(seg) != 8 || seg[0] != "compute" || seg[1] != "v1" || seg[2] != "projects" || seg[4] != "zones" || seg[6] != "instanceGroupManagers" {
		return "", "", "", "", false
	}
	return u.Scheme + "://" + u.Host, seg[3], seg[5], seg[7], true
}

// computeFor returns the Compute Engine client of an origin, on the same
// guarded, authenticated HTTP client as the GKE one.
func (d *Driver) computeFor(ctx context.Context, cs *clients, origin string) (*compute.Service, error) {
	return cs.compute.Load(origin, func() (*compute.Service, error) {
		svc, err := compute.NewService(ctx, option.WithHTTPClient(cs.http), option.WithEndpoint(origin+"/compute/v1/"))
		if err != nil {
			return nil, classify(err, "")
		}
		return svc, nil
	})
}

// opKey names a pool across clusters and endpoints.
func opKey(c *kpool.Cluster, pool string) string {
	g := c.Spec.Platform.GCP
	return c.Spec.Endpoint + " " + g.ProjectID + "/" + g.Location + "/" + g.ClusterName + "/" + pool
}

// started keeps the name of the operation the driver started on a pool,
// replacing the last one's.
func (d *Driver) started(c *kpool.Cluster, pool string, op *container.Operation) {
	if op == nil || op.Name == "" {
		return
	}
	g := c.Spec.Platform.GCP
	name := op.Name
	if !strings.HasPrefix(name, "projects/") {
		name = "projects/" + g.ProjectID + "/locations/" + g.Location + "/operations/" + name
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops.Add(opKey(c, pool), name)
}

// maxOps bounds the operations the driver follows: the pools of a large
// fleet, whose names users choose.
const maxOps = 4096

// follow observes the operation the driver last started on a pool, never
// waiting for it: while it runs the pool is busy even if its status does
// not say so yet (Creating, Deleting or Updating by the operation's type);
// once it is done its error, if any, is the message of a failed pool.
// Reading it is best effort: a list does not fail for it.
func (d *Driver) follow(ctx context.Context, cs *clients, c *kpool.Cluster, p *provider.Pool) {
	key := opKey(c, p.ProviderName)
	name, ok := d.ops.Get(key)
	if !ok {
		return
	}
	op, err := cs.gke.Projects.Locations.Operations.Get(name).Context(ctx).Do()
	if err != nil {
		return
	}
	switch op.Status {
	case "PENDING", "RUNNING":
		if p.State == provider.StateReady || p.State == provider.StateFailed {
			switch op.OperationType {
			case "CREATE_NODE_POOL":
				p.State = provider.StateCreating
			case "DELETE_NODE_POOL":
				p.State = provider.StateDeleting
			default:
				p.State = provider.StateUpdating
			}
			p.ReadyUnknown = true
		}
		return
	}
	if op.Error != nil && op.Error.Message != "" && p.State == provider.StateFailed && p.Message == "" {
		p.Message = op.Error.Message
	}
	if p.State != provider.StateFailed || p.Message != "" {
		d.mu.Lock()
		if cur, _ := d.ops.Get(key); cur == name {
			d.ops.Remove(key)
		}
		d.mu.Unlock()
	}
}

// groupGone reports whether err is Compute's 404 for an instance group.
func groupGone(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}
