package api

import (
	"net/http"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/placement"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
)

// PlacementCost is how many bytes of manifests cost a caller one request of
// its rate, beyond the request itself: a 1 MiB placement costs 17.
const PlacementCost = 64 << 10

// PlacementRequest asks for manifests to be placed on a cluster's pools.
type PlacementRequest struct {
	// Manifests are Kubernetes manifests: YAML or JSON documents.
	Manifests string `json:"manifests"`
	// Pool, Pools, Zone and Zones are the caller's intent; they come before
	// the workloads' annotations and the app's.
	Pool  string   `json:"pool,omitempty"`
	Pools []string `json:"pools,omitempty"`
	Zone  string   `json:"zone,omitempty"`
	Zones []string `json:"zones,omitempty"`
	// App is the app file's spec.deployment, the lowest in precedence.
	App *placement.Intent `json:"app,omitempty"`
	// DefaultPool is the pool of workloads that name none; absent means
	// "user", "" means no pool.
	DefaultPool *string `json:"default_pool,omitempty"`
	// NoTolerations leaves the workloads' tolerations alone.
	NoTolerations bool `json:"no_tolerations,omitempty"`
}

// Options turns the request into placement options for cluster c.
func (b *PlacementRequest) Options(c *placement.Cluster) placement.Options {
	o := placement.Options{
		Intent:        placement.Intent{Pool: b.Pool, Pools: b.Pools, Zone: b.Zone, Zones: b.Zones},
		DefaultPool:   placement.DefaultPool,
		Cluster:       c,
		NoTolerations: b.NoTolerations,
	}
	if b.App != nil {
		o.App = *b.App
	}
	if b.DefaultPool != nil {
		o.DefaultPool = *b.DefaultPool
	}
	return o
}

// createPlacement places the body's manifests on the pools of the cluster
// of the path, checking them against its pools; nothing is stored.
func (s *Server) createPlacement(w http.ResponseWriter, r *http.Request) {
	// A placement costs its caller a request per PlacementCost bytes of
	// body beyond the first, and waits, its body still unread, for one of
	// a few slots: its work and memory grow with its input.
	size := r.ContentLength
	if size < 0 {
		size = MaxBodyBytes
	}
	if !s.allowN(w, r, callerKey(kpool.IdentityFrom(r.Context())), int(size/PlacementCost)) {
		return
	}
	select {
	case s.placing <- struct{}{}:
		defer func() { <-s.placing }()
	case <-r.Context().Done():
		s.writeError(w, r, r.Context().Err())
		return
	}
	var b PlacementRequest
	_, ok := s.decode(w, r, &b)
	if !ok {
		return
	}
	ctx := r.Context()
	c, err := s.svc.Cluster(ctx, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if pl, ok := s.svc.Platforms.Platform(c.Spec.Platform.Type); ok && !pl.HasNodePools() {
		// Placement is onto pools: there are none to place on.
		s.writeError(w, r, pl.NoPools("placement onto node pools"))
		return
	}
	target := &placement.Cluster{Cluster: c, Profile: s.profile(c.Spec.Platform.Type)}
	o := service.ListOptions{ClusterID: c.ID, Limit: kpool.MaxLimit}
	for {
		page, err := s.svc.NodePools(ctx, o)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		target.Pools = append(target.Pools, page.Items...)
		if page.Next == "" {
			break
		}
		o.After = page.Next
	}
	res, err := placement.Place([]byte(b.Manifests), b.Options(target))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// profile returns a platform's profile from the service's platforms (a
// provider.Registry in every kpool process).
func (s *Server) profile(t kpool.PlatformType) provider.Profile {
	if r, ok := s.svc.Platforms.(*provider.Registry); ok {
		return r.Profile(t)
	}
	return provider.NoPools{Platform: t}
}
