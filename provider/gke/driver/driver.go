// Package driver is the GKE driver: kpool node pools as GKE node pools,
// through the official client google.golang.org/api/container/v1, and
// their node counts from their managed instance groups through
// google.golang.org/api/compute/v1 (GKE reports none on a node pool), whose
// deleteInstances removes chosen nodes (NodeRemover, remove.go); and
// the clusters' Kubernetes API as GKE hands it out (KubeAccess, kube.go).
// What kpool knows of GKE without the SDK is its profile, package gke.
package driver

import (
	"context"
	"fmt"
	"net/http"
	"sort"
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

// scopes are the OAuth2 scopes the driver asks tokens for: Google Cloud's
// APIs, and the email a cluster's Kubernetes API identifies the caller by
// (GKE's api-server-authentication page: "the credentials for those
// accounts must include the userinfo.email OAuth scope").
var scopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// Driver is the GKE driver.
type Driver struct {
	opts provider.DriverOptions

	tokens  *provider.Cache[oauth2.TokenSource] // by credential name
	clients *provider.Cache[*clients]           // by credential name and endpoint
	ops     *provider.Cache[string]             // the operation last started on a pool, by opKey

	mu sync.Mutex // held to read and forget the operations in ops
}

// clients are what the driver calls one endpoint with, for one credential.
type clients struct {
	gke     *container.Service
	http    *http.Client
	compute *provider.Cache[*compute.Service] // by origin, which the credential allows
}

// New returns a GKE driver. Credentials of kind default are Application
// Default Credentials (google.DefaultTokenSource), made when first needed.
func New(o provider.DriverOptions) *Driver {
	return &Driver{opts: o.For(profile),
		tokens: provider.NewCache[oauth2.TokenSource](provider.CacheSize), clients: provider.NewCache[*clients](provider.CacheSize),
		ops: provider.NewCache[string](maxOps)}
}

var _ provider.Driver = (*Driver)(nil)

// Capabilities returns GKE's capabilities.
func (d *Driver) Capabilities() provider.Capabilities { return profile.Capabilities() }

// publicEndpoint is the GKE API's.
const publicEndpoint = "https://container.googleapis.com"

// client returns the clients of a cluster's credential and endpoint. The
// credential must allow both: a cluster that names another host or
// project is refused here, before any request, and every request is
// checked again at the wire (provider.Wire).
func (d *Driver) client(ctx context.Context, c *kpool.Cluster) (*clients, *kpool.GCPCluster, error) {
	g := c.Spec.Platform.GCP
	if g == nil {
		return nil, nil, provider.ValidationError(platform, "spec.platform.gcp", "cluster %s has no gcp settings", c.Name)
	}
	endpoint, err := provider.Endpoint(c, publicEndpoint, "the GKE API")
	if err != nil {
		return nil, nil, err
	}
	cr, err := d.opts.Credentials.Resolve(c)
	if err != nil {
		return nil, nil, err
	}
	cs, err := d.clients.Load(cr.Name+" "+endpoint, func() (*clients, error) { return d.newClients(ctx, cr, endpoint) })
	return cs, g, err
}

// newClients makes the clients of a credential at endpoint. The OAuth2
// transport sets the token on every request, each try of which the wire
// checks (retrier); the client follows no redirect.
func (d *Driver) newClients(ctx context.Context, cr *provider.Credential, endpoint string) (*clients, error) {
	ts, err := d.token(cr)
	if err != nil {
		return nil, err
	}
	hc := provider.Client(cr, &oauth2.Transport{Source: ts, Base: &retrier{base: provider.Wire(cr, d.opts.Transport), retry: *d.opts.Retry}})
	svc, err := container.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(endpoint+"/"))
	if err != nil {
		return nil, classify(err, "")
	}
	return &clients{gke: svc, http: hc, compute: provider.NewCache[*compute.Service](provider.CacheSize)}, nil
}

// token returns the token source of a credential, made once.
func (d *Driver) token(cr *provider.Credential) (oauth2.TokenSource, error) {
	return d.tokens.Load(cr.Name, func() (oauth2.TokenSource, error) {
		var ts oauth2.TokenSource
		var err error
		switch cr.Kind {
		case provider.CredentialDefault:
			// The token source outlives this call: not its context.
			ts, err = google.DefaultTokenSource(context.Background(), scopes...)
		case provider.CredentialEmulator:
			ts, err = provider.IdentityOf[oauth2.TokenSource](cr)
		case gke.CredentialServiceAccount:
			ts, err = d.serviceAccount(cr)
		default:
			err = fmt.Errorf("kind %q is not a Google Cloud credential kind", cr.Kind)
		}
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no Google Cloud credential " + cr.Name + ": " + err.Error(), Err: err}
		}
		return oauth2.ReuseTokenSource(nil, ownTokens{ts}), nil
	})
}

// ownTokens hands out a copy of each token: oauth2's reuse wrapper writes
// into the token it is given, and a source shared by several drivers (an
// identity given in code) may give them all the same one.
type ownTokens struct{ ts oauth2.TokenSource }

func (o ownTokens) Token() (*oauth2.Token, error) {
	t, err := o.ts.Token()
	if t == nil || err != nil {
		return t, err
	}
	c := *t
	return &c, nil
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
	groups := d.readGroups(ctx, cs, resp.NodePools)
	for _, np := range resp.NodePools {
		if np == nil {
			continue
		}
		p := observe(c, np)
		switch err := countIn(ctx, groups, c, np, &p); {
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
			if p.State == provider.StateFailed {
				p.Shortage = shortage(c, p.Message, np.Conditions)
			}
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
