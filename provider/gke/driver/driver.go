// Package driver is the GKE driver: kpool node pools as GKE node pools,
// through the official client google.golang.org/api/container/v1, and
// their node counts from their managed instance groups through
// google.golang.org/api/compute/v1 (GKE reports none on a node pool).
// What kpool knows of GKE without the SDK is its profile, package gke.
package driver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/option"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/gke"
)

const platform = gke.Type

var profile = gke.Profile{}

// scope is the OAuth2 scope the driver asks tokens for.
const scope = "https://www.googleapis.com/auth/cloud-platform"

// Options configure the driver.
type Options struct {
	// Credentials say which of the operator's credentials each cluster
	// uses, for which projects, and the hosts it may be sent to. Nil means
	// provider.DefaultCredentials(nil): Application Default Credentials,
	// any project, Google's public endpoints only.
	Credentials provider.Credentials
	// TokenSource is the identity of credentials of kind "default". Nil
	// means Application Default Credentials (google.DefaultTokenSource),
	// made when first needed.
	TokenSource oauth2.TokenSource
	// Transport sends the HTTP requests, under the OAuth2 transport and
	// the driver's guard; nil is http.DefaultTransport. Set it to trust
	// the certificate of an endpoint the system does not.
	Transport http.RoundTripper
	// Retry is how each request is timed out and retried; nil is
	// DefaultRetry().
	Retry *Retry
}

// Driver is the GKE driver.
type Driver struct {
	opts  Options
	retry Retry
	creds provider.Credentials

	mu      sync.Mutex
	tokens  map[string]oauth2.TokenSource // by credential name
	clients map[string]*clients           // by credential name and endpoint
	ops     map[string]string             // the operation last started on a pool, by opKey
}

// clients are what the driver calls one endpoint with, for one credential.
type clients struct {
	gke     *container.Service
	http    *http.Client
	compute map[string]*compute.Service // by origin; guarded by Driver.mu
}

// New returns a GKE driver.
func New(o Options) *Driver {
	d := &Driver{opts: o, retry: DefaultRetry(), tokens: map[string]oauth2.TokenSource{}, clients: map[string]*clients{}, ops: map[string]string{}}
	if o.Retry != nil {
		d.retry = *o.Retry
	}
	d.creds = provider.CredentialsOr(o.Credentials, profile)
	return d
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns GKE's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// publicEndpoint is the GKE API's.
const publicEndpoint = "https://container.googleapis.com"

// client returns the clients of a cluster's credential and endpoint. The
// credential must allow both: a cluster that names another host or
// project is refused here, before any request, and every request is
// checked again at the wire (guard).
func (d *Driver) client(ctx context.Context, c *kpool.Cluster) (*clients, *kpool.GCPCluster, error) {
	g := c.Spec.Platform.GCP
	if g == nil {
		return nil, nil, provider.ValidationError(platform, "spec.platform.gcp", "cluster %s has no gcp settings", c.Name)
	}
	endpoint := publicEndpoint
	if e := c.Spec.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || u.Host == "":
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q is not an absolute URL", e)
		case !strings.EqualFold(u.Scheme, "https"):
			return nil, nil, provider.ValidationError(platform, "spec.endpoint", "%q: the GKE API must be reached over https: an OAuth2 token is not sent over %s", e, u.Scheme)
		}
		endpoint = strings.TrimSuffix(e, "/")
	}
	cr, err := d.creds.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := cr.Name + " " + endpoint
	if cs, ok := d.clients[key]; ok {
		return cs, g, nil
	}
	ts, err := d.token(ctx, cr)
	if err != nil {
		return nil, nil, err
	}
	hc := &http.Client{Transport: &oauth2.Transport{Source: ts, Base: &guard{cred: cr, base: d.opts.Transport, retry: d.retry}}}
	svc, err := container.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(endpoint+"/"))
	if err != nil {
		return nil, nil, classify(err, "")
	}
	cs := &clients{gke: svc, http: hc, compute: map[string]*compute.Service{}}
	d.clients[key] = cs
	return cs, g, nil
}

// token returns the token source of a credential, made once. d.mu is held.
func (d *Driver) token(ctx context.Context, cr *provider.Credential) (oauth2.TokenSource, error) {
	if ts, ok := d.tokens[cr.Name]; ok {
		return ts, nil
	}
	var ts oauth2.TokenSource
	var err error
	switch cr.Kind {
	case provider.CredentialDefault:
		ts = d.opts.TokenSource
		if ts == nil {
			// The token source outlives this call: not ctx.
			ts, err = google.DefaultTokenSource(context.Background(), scope)
		}
	case provider.CredentialEmulator:
		ts, err = provider.IdentityOf[oauth2.TokenSource](cr)
	case provider.CredentialServiceAccount:
		var key string
		if key, err = cr.Secret(); err == nil {
			var creds *google.Credentials
			creds, err = google.CredentialsFromJSONWithType(context.Background(), []byte(key), google.ServiceAccount, scope)
			if err == nil {
				ts = creds.TokenSource
			} else {
				// The parser's message may quote the key: say only what failed.
				err = fmt.Errorf("credential %s: not a service account key file", cr.Name)
			}
		}
	default:
		err = fmt.Errorf("kind %q is not a Google Cloud credential kind", cr.Kind)
	}
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no Google Cloud credential " + cr.Name + ": " + err.Error(), Err: err}
	}
	ts = oauth2.ReuseTokenSource(nil, ts)
	d.tokens[cr.Name] = ts
	return ts, nil
}

// parent and poolPath are the resource names the API takes.
func parent(g *kpool.GCPCluster) string {
	return "projects/" + g.ProjectID + "/locations/" + g.Location + "/clusters/" + g.ClusterName
}

func poolPath(g *kpool.GCPCluster, name string) string { return parent(g) + "/nodePools/" + name }

// NodePoolList lists the cluster's node pools with their node counts.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	resp, err := cs.gke.Projects.Locations.Clusters.NodePools.List(parent(g)).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	out := make([]provider.Pool, 0, len(resp.NodePools))
	for _, np := range resp.NodePools {
		if np == nil {
			continue
		}
		p := observe(c, np)
		switch err := d.count(ctx, cs, c, np, &p); {
		case err != nil && provider.IsTransient(err) && !provider.IsThrottled(err) && ctx.Err() == nil:
			// Its node count is unknown for now (its instance groups did
			// not answer): reported Unknown, which the controllers wait on,
			// rather than failing the whole list for one pool.
			p.State, p.ReadyUnknown = provider.StateUnknown, true
			p.Message = "reading its instance groups failed: " + err.Error()
		case err != nil:
			return nil, err
		default:
			d.follow(ctx, cs, c, &p)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// get reads one node pool; a missing one is (nil, nil).
func get(ctx context.Context, cs *clients, g *kpool.GCPCluster, name string) (*container.NodePool, error) {
	np, err := cs.gke.Projects.Locations.Clusters.NodePools.Get(poolPath(g, name)).Context(ctx).Do()
	if err != nil {
		if poolMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "")
	}
	return np, nil
}

// zonesFor returns the zones a spec puts a pool in: its own, or, for a
// spec that names none, the cluster's default node locations, which GKE
// gives a node pool created without locations.
func (d *Driver) zonesFor(ctx context.Context, cs *clients, c *kpool.Cluster, g *kpool.GCPCluster, s provider.PoolSpec) ([]string, error) {
	var out []string
	for _, z := range s.Zones {
		pz, err := profile.ProviderZone(c, z)
		if err != nil {
			return nil, provider.ValidationError(platform, "spec.zones", "%v", err)
		}
		out = append(out, pz)
	}
	if len(out) > 0 {
		return out, nil
	}
	cl, err := cs.gke.Projects.Locations.Clusters.Get(parent(g)).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	if len(cl.Locations) == 0 {
		return []string{g.Location}, nil
	}
	return cl.Locations, nil
}

// perZone converts kpool's pool-wide node count into GKE's per-zone one:
// a count that does not divide evenly over the zones is refused.
func perZone(count int, zones []string) (int64, error) {
	n := len(zones)
	if n == 0 {
		n = 1
	}
	if count%n != 0 {
		return 0, provider.ValidationError(platform, "spec.nodeCount",
			"GKE keeps the same number of nodes in each zone of a node pool: %d nodes do not divide evenly over %d zones (%s); give a multiple of %d",
			count, n, strings.Join(zones, ", "), n)
	}
	return int64(count / n), nil
}

// NodePoolCreate creates a node pool, or returns the existing one when it
// already matches.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if !profile.Capabilities().Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not a GKE node pool name: 1-40 lowercase letters, digits or '-', starting with a letter", s.ProviderName)
	}
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	existing, err := get(ctx, cs, g, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		p := observe(c, existing)
		if err := d.count(ctx, cs, c, existing, &p); err != nil {
			return nil, err
		}
		return adopt(&p, s)
	}
	zones, err := d.zonesFor(ctx, cs, c, g, s)
	if err != nil {
		return nil, err
	}
	np, err := nodePool(s, zones)
	if err != nil {
		return nil, err
	}
	op, err := cs.gke.Projects.Locations.Clusters.NodePools.Create(parent(g), &container.CreateNodePoolRequest{NodePool: np}).Context(ctx).Do()
	if err != nil {
		return nil, classify(err, "")
	}
	d.started(c, s.ProviderName, op)
	p := provider.Pool{PoolSpec: s, State: provider.StateCreating, ProviderState: "PROVISIONING", ReadyUnknown: true}
	return &p, nil
}

// nodePool maps a neutral spec to the node pool a create sends.
func nodePool(s provider.PoolSpec, zones []string) (*container.NodePool, error) {
	var per int64
	if s.Autoscaling {
		// The autoscaler's bounds are total ones; its first count is
		// rounded up per zone and then the autoscaler's.
		n := max(len(zones), 1)
		per = int64((s.Count + n - 1) / n)
	} else {
		var err error
		if per, err = perZone(s.Count, zones); err != nil {
			return nil, err
		}
	}
	np := &container.NodePool{
		Name: s.ProviderName, InitialNodeCount: per, Locations: zones, Version: s.Version,
		Config: &container.NodeConfig{
			MachineType: s.MachineType, DiskSizeGb: int64(s.DiskSizeGB), DiskType: s.DiskType, Spot: s.Spot,
			Labels: maps(s.Labels), Taints: taints(s.Taints), ResourceLabels: maps(s.Tags),
		},
		// A pinned version is kpool's to change: GKE must not upgrade it.
		Management:  &container.NodeManagement{AutoRepair: true, AutoUpgrade: s.Version == ""},
		Autoscaling: autoscaling(s),
	}
	for _, a := range s.Accelerators {
		np.Config.Accelerators = append(np.Config.Accelerators, &container.AcceleratorConfig{AcceleratorType: a.Type, AcceleratorCount: int64(a.Count)})
	}
	return np, nil
}

// autoscaling is a spec's autoscaler: kpool's bounds are the pool's, so
// GKE's total bounds (which need no even split); nil when off.
func autoscaling(s provider.PoolSpec) *container.NodePoolAutoscaling {
	if !s.Autoscaling {
		return nil
	}
	return &container.NodePoolAutoscaling{Enabled: true, TotalMinNodeCount: int64(s.MinCount), TotalMaxNodeCount: int64(s.MaxCount),
		LocationPolicy: "BALANCED", ForceSendFields: []string{"TotalMinNodeCount"}}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// effects are kpool's taint effects as GKE names them.
var effects = map[string]string{kpool.EffectNoSchedule: "NO_SCHEDULE", kpool.EffectPreferNoSchedule: "PREFER_NO_SCHEDULE", kpool.EffectNoExecute: "NO_EXECUTE"}

func taints(ts []kpool.Taint) []*container.NodeTaint {
	out := []*container.NodeTaint{}
	for _, t := range ts {
		e, ok := effects[t.Effect]
		if !ok {
			e = t.Effect
		}
		out = append(out, &container.NodeTaint{Key: t.Key, Value: t.Value, Effect: e})
	}
	return out
}

// adopt answers a create for a pool that exists: returned as it is when it
// matches, a validation error when a field only a new pool can change
// differs, ErrAlreadyExists when an update would do.
func adopt(p *provider.Pool, s provider.PoolSpec) (*provider.Pool, error) {
	if err := immutable(p, s); err != nil {
		return nil, err
	}
	if len(changes(p, s)) > 0 {
		return nil, &provider.Error{Kind: provider.KindAlreadyExists, Provider: platform,
			Reason: "node pool " + s.ProviderName + " exists with other mutable settings; update it"}
	}
	return p, nil
}

// immutable refuses a spec that differs from a pool in a field GKE fixes
// at creation: spot and accelerators.
func immutable(p *provider.Pool, s provider.PoolSpec) error {
	if p.Spot != s.Spot {
		return provider.ValidationError(platform, "spec.platform.gcp.preemptible", "node pool %s has spot %v and GKE cannot change it in place; create a new pool", p.ProviderName, p.Spot)
	}
	if !sameAccelerators(p.Accelerators, s.Accelerators) {
		return provider.ValidationError(platform, "spec.platform.gcp.accelerators", "node pool %s has other accelerators and GKE cannot change them in place; create a new pool", p.ProviderName)
	}
	return nil
}

func sameAccelerators(a, b []kpool.Accelerator) bool {
	key := func(x []kpool.Accelerator) string {
		var out []string
		for _, a := range x {
			out = append(out, fmt.Sprintf("%s=%d", a.Type, a.Count))
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	return key(a) == key(b)
}

// Steps of an update, in the order the driver takes them: one GKE
// operation per NodePoolUpdate call, since GKE refuses a second operation
// on a pool while one runs (FAILED_PRECONDITION); the controllers call
// again once the pool is idle, and the next step goes.
const (
	stepUpdate      = "update"
	stepAutoscaling = "setAutoscaling"
	stepSize        = "setSize"
	stepManagement  = "setManagement"
)

// changes lists the steps that bring a pool to a spec.
func changes(p *provider.Pool, s provider.PoolSpec) []string {
	var out []string
	if s.MachineType != "" && p.MachineType != s.MachineType ||
		s.DiskSizeGB != 0 && p.DiskSizeGB != s.DiskSizeGB || s.DiskType != "" && p.DiskType != s.DiskType ||
		s.Version != "" && !versionMatches(p.Version, s.Version) ||
		len(s.Zones) > 0 && !slices.Equal(p.Zones, s.Zones) ||
		!provider.SameLabels(p.Labels, s.Labels) || !provider.SameTaints(p.Taints, profile.NodeTaints(s)) || !provider.SameMap(p.Tags, s.Tags) {
		out = append(out, stepUpdate)
	}
	if p.Autoscaling != s.Autoscaling || s.Autoscaling && (p.MinCount != s.MinCount || p.MaxCount != s.MaxCount) {
		out = append(out, stepAutoscaling)
	}
	if !s.Autoscaling && p.Count != s.Count {
		out = append(out, stepSize)
	}
	if auto := s.Version == ""; p.Extra["autoUpgrade"] != fmt.Sprint(auto) {
		out = append(out, stepManagement)
	}
	return out
}

// versionMatches reports whether a pool's version (1.30.5, the -gke.N
// build cut) is the one asked for (1.30, 1.30.5).
func versionMatches(got, want string) bool {
	return got == want || strings.HasPrefix(got, want+".")
}

// NodePoolUpdate changes a node pool's mutable settings, one GKE operation
// per call (see changes): update (version, zones, labels, taints, resource
// labels; machine type and disk roll the nodes), setAutoscaling, setSize,
// setManagement. The placement labels stay as the pool has them; with
// autoscaling on, the count stays the autoscaler's.
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return nil, err
	}
	np, err := get(ctx, cs, g, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if np == nil {
		return nil, &provider.Error{Kind: provider.KindNotFound, Provider: platform, Reason: "node pool " + s.ProviderName + " not found"}
	}
	p := observe(c, np)
	if np.Status == "ERROR" {
		// A node pool whose create or delete failed takes no update: it can
		// only be deleted. Deleting it is the repair; once it is gone, the
		// pool is created again.
		op, err := cs.gke.Projects.Locations.Clusters.NodePools.Delete(poolPath(g, s.ProviderName)).Context(ctx).Do()
		if err != nil {
			return nil, classify(err, "")
		}
		d.started(c, s.ProviderName, op)
		p.State, p.ProviderState = provider.StateDeleting, "STOPPING"
		p.Message = fmt.Sprintf("ERROR (%s): deleting it to create it again", p.Message)
		return &p, nil
	}
	if err := immutable(&p, s); err != nil {
		return nil, err
	}
	if err := d.count(ctx, cs, c, np, &p); err != nil {
		return nil, err
	}
	labels := maps(s.Labels)
	for _, k := range []string{provider.LabelPool, provider.LabelZone} {
		if v, ok := p.Labels[k]; ok {
			labels[k] = v
		} else {
			delete(labels, k)
		}
	}
	s.Labels = labels // the caller's map stays as it was
	steps := changes(&p, s)
	if len(steps) == 0 {
		return &p, nil
	}
	if p.State != provider.StateReady && p.State != provider.StateFailed {
		return nil, &provider.Error{Kind: provider.KindTransient, Provider: platform,
			Reason: fmt.Sprintf("node pool %s is %s (%s): GKE takes no other operation until it ends", s.ProviderName, p.ProviderState, p.State)}
	}
	name := poolPath(g, s.ProviderName)
	pools := cs.gke.Projects.Locations.Clusters.NodePools
	var op *container.Operation
	switch steps[0] {
	case stepUpdate:
		req := &container.UpdateNodePoolRequest{Name: name, Etag: np.Etag,
			Labels:         &container.NodeLabels{Labels: s.Labels, ForceSendFields: []string{"Labels"}},
			Taints:         &container.NodeTaints{Taints: taints(profile.NodeTaints(s)), ForceSendFields: []string{"Taints"}},
			ResourceLabels: &container.ResourceLabels{Labels: maps(s.Tags), ForceSendFields: []string{"Labels"}}}
		if s.Version != "" && !versionMatches(p.Version, s.Version) {
			req.NodeVersion = s.Version
		}
		if s.MachineType != "" && s.MachineType != p.MachineType {
			req.MachineType = s.MachineType
		}
		if s.DiskSizeGB != 0 && s.DiskSizeGB != p.DiskSizeGB {
			req.DiskSizeGb = int64(s.DiskSizeGB)
		}
		if s.DiskType != "" && s.DiskType != p.DiskType {
			req.DiskType = s.DiskType
		}
		if len(s.Zones) > 0 && !slices.Equal(p.Zones, s.Zones) {
			zones, err := d.zonesFor(ctx, cs, c, g, s)
			if err != nil {
				return nil, err
			}
			// The per-zone count stays: the pool's count must still
			// divide over the new zones.
			if !s.Autoscaling {
				if _, err := perZone(s.Count, zones); err != nil {
					return nil, err
				}
			}
			req.Locations = zones
		}
		op, err = pools.Update(name, req).Context(ctx).Do()
	case stepAutoscaling:
		a := autoscaling(s)
		if a == nil {
			a = &container.NodePoolAutoscaling{Enabled: false, ForceSendFields: []string{"Enabled"}}
		}
		op, err = pools.SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{Name: name, Autoscaling: a}).Context(ctx).Do()
	case stepSize:
		zones := np.Locations
		var per int64
		if per, err = perZone(s.Count, zones); err != nil {
			return nil, err
		}
		op, err = pools.SetSize(name, &container.SetNodePoolSizeRequest{Name: name, NodeCount: per, ForceSendFields: []string{"NodeCount"}}).Context(ctx).Do()
	case stepManagement:
		auto := s.Version == ""
		op, err = pools.SetManagement(name, &container.SetNodePoolManagementRequest{Name: name,
			Management: &container.NodeManagement{AutoRepair: true, AutoUpgrade: auto, ForceSendFields: []string{"AutoRepair", "AutoUpgrade"}}}).Context(ctx).Do()
	}
	if err != nil {
		return nil, classify(err, "")
	}
	d.started(c, s.ProviderName, op)
	p.State, p.ProviderState, p.ReadyUnknown = provider.StateUpdating, "RECONCILING", true
	return &p, nil
}

// NodePoolDelete deletes a node pool; a missing one is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cs, g, err := d.client(ctx, c)
	if err != nil {
		return err
	}
	op, err := cs.gke.Projects.Locations.Clusters.NodePools.Delete(poolPath(g, providerName)).Context(ctx).Do()
	if err != nil {
		if poolMissing(err) {
			return nil
		}
		return classify(err, "")
	}
	d.started(c, providerName, op)
	return nil
}
