// Package driver is the Civo driver: kpool node pools as the pools of a
// Civo Kubernetes cluster, through Civo's v2 pools API (a small typed
// client on net/http: civogo is not a dependency). What kpool knows of Civo
// without the API is its profile, package civo.
package driver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/civo"
)

const platform = civo.Type

var profile = civo.Profile{}

// TokenEnv is the environment variable a credential of kind "default"
// reads its API key from.
const TokenEnv = "CIVO_TOKEN"

// Driver is the Civo driver.
type Driver struct {
	opts provider.DriverOptions
	// kube are the clusters' Kubernetes clients, for Civo's cluster
	// autoscaler's configuration.
	kube kubeClients
}

// New returns a Civo driver. Credentials of kind default read their API
// key from CIVO_TOKEN (TokenEnv) in kpool's environment.
func New(o provider.DriverOptions) *Driver {
	return &Driver{opts: o.For(profile)}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns Civo's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// client returns the API client of a cluster: its credential's key, its
// region, and its endpoint (Civo's public API unless the cluster names
// another), which the credential must allow. The check is made here,
// before any request, and again for every request, at the wire
// (provider.Wire).
func (d *Driver) client(c *kpool.Cluster) (*Client, string, error) {
	cv := c.Spec.Platform.Civo
	switch {
	case cv == nil:
		return nil, "", provider.ValidationError(platform, "spec.platform.civo", "cluster %s has no civo settings", c.Name)
	case cv.Region == "":
		return nil, "", provider.ValidationError(platform, "spec.platform.civo.region", "cluster %s names no region", c.Name)
	case cv.ClusterID == "":
		return nil, "", provider.ValidationError(platform, "spec.platform.civo.clusterId", "cluster %s names no Civo cluster id", c.Name)
	}
	endpoint, err := provider.Endpoint(c, civo.PublicEndpoint, "Civo")
	if err != nil {
		return nil, "", err
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, "", provider.ValidationError(platform, "spec.endpoint", "%q is not an absolute URL", endpoint)
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, "", err
	}
	if err := provider.CheckOrigin(cr, u); err != nil {
		return nil, "", classify(err, "")
	}
	key, err := d.key(cr)
	if err != nil {
		return nil, "", err
	}
	// Every request passes the wire's check; no redirect is followed.
	cl := NewClient(endpoint, key, cv.Region, provider.Client(cr, provider.Wire(cr, d.opts.Transport)))
	cl.Retry = *d.opts.Retry
	cl.kubeServer = func(server string) error { return provider.CheckKubeServer(profile, cr, c, server) }
	return cl, cv.ClusterID, nil
}

// key reads a credential's API key: CIVO_TOKEN for the default kind, the secret's variable or file for an api-key one. The key
// is never in an error.
func (d *Driver) key(cr *provider.Credential) (string, error) {
	var key string
	var err error
	switch cr.Kind {
	case provider.CredentialDefault:
		key = strings.TrimSpace(os.Getenv(TokenEnv))
		if key == "" {
			err = errors.New("no API key: set " + TokenEnv + " in kpool's environment, or name an api-key credential")
		}
	case provider.CredentialEmulator:
		key, err = provider.IdentityOf[string](cr)
	case civo.CredentialAPIKey:
		key, err = cr.Secret()
	default:
		err = errors.New("kind " + cr.Kind + " is not a Civo credential kind")
	}
	if err != nil {
		return "", &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no Civo API key for credential " + cr.Name + ": " + err.Error(), Err: err}
	}
	return key, nil
}

// NodePoolList lists the cluster's pools: one call, which carries every
// pool's instances, then the cluster (is the autoscaler installed, and
// its kubeconfig; its conditions say which pools are short of capacity)
// and, when it is, the autoscaler's Deployment once for every pool's
// bounds.
func (d *Driver) NodePoolList(ctx context.Context, c *kpool.Cluster) ([]provider.Pool, error) {
	cl, id, err := d.client(c)
	if err != nil {
		return nil, err
	}
	pools, err := cl.List(ctx, id)
	if err != nil {
		return nil, classify(err, "")
	}
	a, err := d.autoscalerOf(ctx, cl, id, false)
	if err != nil {
		return nil, err
	}
	entries, err := a.entries(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]provider.Pool, 0, len(pools))
	for i := range pools {
		p := observe(&pools[i])
		withBounds(&p, entries)
		withShortage(&p, a.cluster)
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderName < out[j].ProviderName })
	return out, nil
}

// get reads one pool; a missing one is (nil, nil).
func get(ctx context.Context, cl *Client, cluster, id string) (*Pool, error) {
	p, err := cl.Get(ctx, cluster, id)
	if err != nil {
		if poolMissing(err) {
			return nil, nil
		}
		return nil, classify(err, "")
	}
	return p, nil
}

// check refuses what Civo cannot take, before anything reaches it.
func check(s provider.PoolSpec) error {
	if err := provider.CheckSupported(profile.Capabilities(), s); err != nil {
		return err
	}
	for k := range s.Settings {
		if k != civo.SettingPublicIP {
			return provider.ValidationError(platform, "spec.platform.civo", "setting %q is not a Civo pool setting", k)
		}
	}
	switch {
	case s.MachineType == "":
		return provider.ValidationError(platform, "spec.platform.civo.size", "a Civo pool needs a size, such as g4s.kube.medium")
	case s.Count < 1:
		return provider.ValidationError(platform, "spec.nodeCount", "a Civo pool has at least 1 node, got %d", s.Count)
	case s.Autoscaling && (s.MinCount < 1 || s.MaxCount < s.MinCount):
		return provider.ValidationError(platform, "spec.autoscaling", "a Civo pool autoscales between at least 1 node and a maximum no lower, got %d-%d", s.MinCount, s.MaxCount)
	}
	return nil
}

func publicIP(s provider.PoolSpec) bool { return s.Settings[civo.SettingPublicIP] == "true" }

// NodePoolCreate creates a pool named by its provider name, or returns the
// existing one when it already matches.
func (d *Driver) NodePoolCreate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := check(s); err != nil {
		return nil, err
	}
	if !profile.Capabilities().Names.Match(s.ProviderName) {
		return nil, provider.ValidationError(platform, "provider_name", "%q is not a Civo pool id: 1-63 lowercase letters, digits or '-', starting with a letter", s.ProviderName)
	}
	cl, id, err := d.client(c)
	if err != nil {
		return nil, err
	}
	existing, err := get(ctx, cl, id, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return d.adopt(ctx, cl, id, existing, s)
	}
	taints := taintsOf(s.Taints)
	pub := publicIP(s)
	err = cl.Create(ctx, id, PoolConfig{ID: s.ProviderName, Count: &s.Count, Size: s.MachineType, Labels: labels(s.Labels, s.Owner),
		Taints: &taints, PublicIPNodePool: &pub})
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			// Created meanwhile (by this call's earlier try, or another):
			// answer as for an existing pool.
			if existing, gerr := get(ctx, cl, id, s.ProviderName); gerr == nil && existing != nil {
				return d.adopt(ctx, cl, id, existing, s)
			}
		}
		return nil, classify(err, "")
	}
	if s.Autoscaling {
		// The pool is there: a failure here is retried by a create that
		// adopts it and an update that writes the entry.
		if err := d.configure(ctx, cl, id, s); err != nil {
			return nil, err
		}
	}
	p := provider.Pool{PoolSpec: s, State: provider.StateCreating, ProviderState: statusBuilding + "=" + strconv.Itoa(s.Count), Extra: map[string]string{"region": cl.Region}}
	p.PoolSpec.Labels = copyMap(s.Labels)
	p.PoolSpec.Zones = nil
	p.Problems = provider.CheckContract(&p)
	return &p, nil
}

// labels are a pool's node labels: the user's and kpool's, and the
// owner's mark (LabelKeys, in kpool's own label domain). A Civo pool
// carries no tags: the v2 API's pool is its id, size, count, labels,
// taints and public_ip_node_pool (as Civo's own Terraform and Pulumi
// providers' civo_kubernetes_node_pool has it; the cluster has tags, its
// pools none), so the mark is on its nodes, where users' labels may not
// go (kompox.dev is kpool's domain).
func labels(user map[string]string, o provider.Owner) map[string]string {
	return provider.LabelKeys.Put(user, o)
}

// adopt answers a create for a pool that exists (provider.Adopt), with
// its bounds as the autoscaler has them.
func (d *Driver) adopt(ctx context.Context, cl *Client, id string, cp *Pool, s provider.PoolSpec) (*provider.Pool, error) {
	p := observe(cp)
	entries, err := d.entries(ctx, cl, id)
	if err != nil {
		return nil, err
	}
	withBounds(&p, entries)
	return provider.Adopt(profile, s, &p)
}

// NodePoolUpdate changes a pool's count, labels and taints in one PUT. The
// placement labels stay as the pool has them; an unmarked pool gets the
// spec's owner's mark, and one another owner marked is refused
// (KindForeign). A pool whose nodes failed is repaired by asking Civo for
// its count again, which rebuilds them. With autoscaling on, the count
// is the autoscaler's: only one outside the bounds is clamped into them;
// bounds that differ are written to the autoscaler's entry for the pool.
func (d *Driver) NodePoolUpdate(ctx context.Context, c *kpool.Cluster, s provider.PoolSpec) (*provider.Pool, error) {
	if err := check(s); err != nil {
		return nil, err
	}
	cl, id, err := d.client(c)
	if err != nil {
		return nil, err
	}
	cp, err := get(ctx, cl, id, s.ProviderName)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		return nil, provider.NotFoundError(platform, "pool", s.ProviderName)
	}
	observed := observe(cp)
	entries, err := d.entries(ctx, cl, id)
	if err != nil {
		return nil, err
	}
	withBounds(&observed, entries)
	if err := provider.Refuse(profile, s, &observed); err != nil {
		return nil, err
	}
	// Civo's PUT is unconditional (no etag): a mark written between this
	// read and the PUT would be lost, a window of one round trip.
	if s.Owner, err = provider.Remark(platform, s.ProviderName, observed.Owner, s.Owner); err != nil {
		return nil, err
	}
	out := &observed
	if cfg, changed := poolChanges(cp, &observed, s); changed {
		updated, err := cl.Update(ctx, id, s.ProviderName, cfg)
		if err != nil {
			return nil, classify(err, "")
		}
		p := observe(updated)
		if p.State == provider.StateFailed {
			// Nodes that could not start: the cluster's conditions say
			// whether for want of capacity (best effort: the list says it
			// again).
			if c, err := cl.Cluster(ctx, id); err == nil {
				withShortage(&p, c)
			}
		}
		out = &p
	}
	if !sameBounds(s, &observed) {
		if err := d.configure(ctx, cl, id, s); err != nil {
			return nil, err
		}
	}
	out.Autoscaling, out.MinCount, out.MaxCount = s.Autoscaling, s.MinCount, s.MaxCount
	return out, nil
}

// poolChanges is the PUT that brings a pool to the spec: its count (with
// autoscaling on, only one outside the bounds; and again when nodes
// failed, which rebuilds them), labels and taints, each only when it
// differs; changed is false when nothing does.
func poolChanges(cp *Pool, observed *provider.Pool, s provider.PoolSpec) (cfg PoolConfig, changed bool) {
	want := provider.KeepPlacement(ownLabels(s.Labels), observed.Labels)
	want = labels(want, s.Owner)
	if n := wantCount(s, cp.Count); cp.Count != n || observed.State == provider.StateFailed {
		cfg.Count, changed = &n, true
	}
	if !provider.SameMap(labels(ownLabels(observed.Labels), observed.Owner), want) {
		cfg.Labels, changed = want, true
	}
	if !provider.SameTaints(userTaints(observed.Taints), s.Taints) {
		t := taintsOf(s.Taints)
		cfg.Taints, changed = &t, true
	}
	return cfg, changed
}

// NodePoolDelete deletes a pool and its autoscaler entry; a missing one
// is not an error.
func (d *Driver) NodePoolDelete(ctx context.Context, c *kpool.Cluster, providerName string) error {
	cl, id, err := d.client(c)
	if err != nil {
		return err
	}
	// Its autoscaler entry goes first, so that the autoscaler never
	// scales a pool that is going; another pool's entry stays.
	if err := d.configure(ctx, cl, id, provider.PoolSpec{ProviderName: providerName}); err != nil {
		return err
	}
	if err := cl.Delete(ctx, id, providerName); err != nil && !poolMissing(err) {
		return classify(err, "")
	}
	return nil
}

// taintsOf maps kpool taints to Civo's (never nil: an empty list clears).
func taintsOf(ts []kpool.Taint) []Taint {
	out := make([]Taint, 0, len(ts))
	for _, t := range ts {
		out = append(out, Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return out
}

// userTaints drops the taints Civo sets itself.
func userTaints(ts []kpool.Taint) []kpool.Taint {
	var out []kpool.Taint
	for _, t := range ts {
		if !civoOwned(t.Key) {
			out = append(out, t)
		}
	}
	return out
}
