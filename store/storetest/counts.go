package storetest

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// checkCounts checks that NodePoolCounts agrees, for each caller, with the
// totals of the lists of each cluster's pools in each phase: the same
// counters, summed per cluster and phase, and nothing of a cluster the
// caller does not see.
func checkCounts(t *testing.T, s *service.Service, step string, clusters ...*kpool.Cluster) {
	t.Helper()
	for _, who := range []string{Alice, Bob, Admin} {
		counts := ok(s.NodePoolCounts(Ctx(who), ""))(t)
		got := map[string]map[kpool.Phase]int{}
		for _, c := range counts {
			if c.N <= 0 {
				t.Fatalf("%s: %s's counts hold a row of %d", step, who, c.N)
			}
			if got[c.ClusterID] == nil {
				got[c.ClusterID] = map[kpool.Phase]int{}
			}
			got[c.ClusterID][c.Phase] += c.N
		}
		for _, c := range clusters {
			for _, ph := range kpool.Phases {
				want := 0
				if l, err := s.NodePools(Ctx(who), service.ListOptions{ClusterID: c.ID, Phase: ph, Limit: 1}); err == nil {
					want = l.Total
				}
				if got[c.ID][ph] != want {
					t.Fatalf("%s: %s's counts say %d pools of %s are %s, the list %d", step, who, got[c.ID][ph], c.Name, ph, want)
				}
			}
		}
		one := ok(s.NodePoolCounts(Ctx(who), clusters[0].ID))(t)
		for _, c := range one {
			if c.ClusterID != clusters[0].ID {
				t.Fatalf("%s: counts of cluster %s hold cluster %s", step, clusters[0].ID, c.ClusterID)
			}
		}
	}
}
