package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kpool/kpool"
)

// Bounds of a facts report: a region's catalogue is hundreds of machine
// types, never tens of thousands.
const (
	maxMachineTypes   = 20000
	maxFactsName      = 256
	factsCacheTTL     = 10 * time.Second
	factsCacheEntries = 4096
)

// ReportClusterFacts stores what a controller learnt of a cluster from
// its provider (kpool.ClusterFacts), which pool writes are checked
// against (preflight). Controllers only.
func (s *Service) ReportClusterFacts(ctx context.Context, clusterID string, f *kpool.ClusterFacts) error {
	id, err := caller(ctx)
	if err != nil {
		return err
	}
	if !id.Controller {
		return kpool.Errorf(kpool.CodeForbidden, "only controller identities may report what a cluster offers")
	}
	if !kpool.IsUUID(clusterID) {
		return notFound("Cluster", clusterID)
	}
	if err := validateFacts(f); err != nil {
		return err
	}
	f.Sort()
	if err := s.Store.PutClusterFacts(ctx, clusterID, f); err != nil {
		return err
	}
	s.facts.put(clusterID, f, s.now())
	return nil
}

func validateFacts(f *kpool.ClusterFacts) error {
	var fe kpool.FieldErrors
	switch {
	case f == nil:
		fe.Add("facts", "required")
	case f.LearnedAt.IsZero():
		fe.Add("facts.learnedAt", "required")
	case len(f.MachineTypes) > maxMachineTypes:
		fe.Add("facts.machineTypes", "at most %d, got %d", maxMachineTypes, len(f.MachineTypes))
	default:
		for i, m := range f.MachineTypes {
			if m.Name == "" || len(m.Name) > maxFactsName {
				fe.Add(fmt.Sprintf("facts.machineTypes[%d].name", i), "1-%d characters", maxFactsName)
			}
		}
	}
	return fe.Err()
}

// ClusterFacts returns what kpool learnt of a cluster the caller may see;
// nil when nothing yet.
func (s *Service) ClusterFacts(ctx context.Context, clusterID string) (*kpool.ClusterFacts, error) {
	if _, err := s.Cluster(ctx, clusterID); err != nil {
		return nil, err
	}
	return s.Store.ClusterFacts(ctx, clusterID)
}

// preflight checks a pool write against its cluster's facts (the
// platforms' Preflight); prev is the spec before an update, nil on a
// create. Facts that cannot be read refuse nothing: the check is skipped
// with a warning.
func (s *Service) preflight(ctx context.Context, c *kpool.Cluster, spec, prev *kpool.NodePoolSpec) ([]string, error) {
	now := s.now()
	f, ok := s.facts.get(c.ID, now)
	if !ok {
		var err error
		if f, err = s.Store.ClusterFacts(ctx, c.ID); err != nil {
			return []string{"preflight skipped: the cluster's facts could not be read: " + err.Error()}, nil
		}
		s.facts.put(c.ID, f, now)
	}
	return s.Platforms.Preflight(c, spec, prev, f, now)
}

// factsCache keeps clusters' facts for factsCacheTTL, so that a burst of
// creates reads them once; a report in this process replaces them at
// once, one in another process within the TTL.
type factsCache struct {
	mu sync.Mutex
	m  map[string]cachedFacts
}

type cachedFacts struct {
	f  *kpool.ClusterFacts // nil: none learnt yet
	at time.Time
}

func (fc *factsCache) get(id string, now time.Time) (*kpool.ClusterFacts, bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	e, ok := fc.m[id]
	if !ok || now.Sub(e.at) > factsCacheTTL {
		return nil, false
	}
	return e.f, true
}

func (fc *factsCache) put(id string, f *kpool.ClusterFacts, now time.Time) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.m == nil || len(fc.m) >= factsCacheEntries {
		fc.m = map[string]cachedFacts{} // the cache only saves reads
	}
	fc.m[id] = cachedFacts{f: f, at: now}
}
