package service_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestDryRunStoresNothing: every write that takes DryRun answers as the
// write would (the object, gone or not, the conflict) and leaves the store
// as it was: no row and no event.
func TestDryRunStoresNothing(t *testing.T) {
	ctx, admin := storetest.Ctx(storetest.Alice), storetest.Ctx(storetest.Admin)
	spec := json.RawMessage(storetest.GCPPool)
	tests := []struct {
		name string
		// write runs the dry run on cluster c and pool p of Alice's.
		write func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error
	}{
		{"create cluster", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, err := s.CreateCluster(ctx, service.ClusterCreate{Name: "other", Spec: storetest.ClusterSpec(storetest.Alice, "other"), DryRun: true})
			return err
		}},
		{"create pool", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, err := s.CreateNodePool(ctx, service.NodePoolCreate{Name: "other", ClusterID: c.ID, Spec: spec, DryRun: true})
			return err
		}},
		{"create zonal pools", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, err := s.CreateZonalNodePools(ctx, service.NodePoolCreate{Name: "zonal", ClusterID: c.ID,
				Spec: json.RawMessage(`{"nodeCount":1,"zones":["1","2"],"platform":{"gcp":{"machineType":"e2-small"}}}`), DryRun: true})
			return err
		}},
		{"update cluster", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			out, err := s.UpdateCluster(ctx, c.ID, service.Update{Spec: json.RawMessage(`{"importPools":true}`), Patch: true, DryRun: true})
			if err == nil && (!out.Spec.ImportPools || out.Generation != c.Generation+1) {
				t.Errorf("update cluster: the answer is not the cluster as updated: %+v", out.Spec)
			}
			return err
		}},
		{"update pool", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			out, err := s.UpdateNodePool(ctx, p.ID, service.Update{Spec: json.RawMessage(`{"nodeCount":5}`), DryRun: true})
			if err == nil && *out.Spec.NodeCount != 5 {
				t.Errorf("update pool: the answer is not the pool as updated")
			}
			return err
		}},
		{"delete pool", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, gone, err := s.DeleteNodePool(ctx, p.ID, service.Delete{DryRun: true})
			if err == nil && !gone {
				t.Error("delete pool: a pool no controller reported on would go at once")
			}
			return err
		}},
		{"force delete pool", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, gone, err := s.DeleteNodePool(admin, p.ID, service.Delete{Force: true, DryRun: true})
			if err == nil && !gone {
				t.Error("force delete pool: not gone")
			}
			return err
		}},
		{"delete cluster with its pools", func(s *service.Service, c *kpool.Cluster, p *kpool.NodePool) error {
			_, _, err := s.DeleteCluster(ctx, c.ID, service.Delete{Force: true, DryRun: true})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := service.New(testdb.SQLite(t), storetest.Platforms)
			c := storetest.NewCluster(t, s, storetest.Alice, "prod")
			p := storetest.NewPool(t, s, c, "workers")
			before, err := s.Store.LastEventID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.write(s, c, p); err != nil {
				t.Fatalf("dry run: %v", err)
			}
			if evs, err := s.Store.Events(context.Background(), before, 10); err != nil || len(evs) != 0 {
				t.Fatalf("a dry run stored %d events (%v)", len(evs), err)
			}
			pools, err := s.NodePools(ctx, service.ListOptions{})
			if err != nil || pools.Total != 1 || pools.Items[0].ResourceVersion != p.ResourceVersion {
				t.Fatalf("after a dry run: %d pools, %v", pools.Total, err)
			}
			clusters, err := s.Clusters(ctx, service.ListOptions{})
			if err != nil || clusters.Total != 1 || clusters.Items[0].ResourceVersion != c.ResourceVersion {
				t.Fatalf("after a dry run: %d clusters, %v", clusters.Total, err)
			}
		})
	}
}

// TestForcedDeleteIsAdmins: only an admin may remove a pool's record at
// once, dry run or not.
func TestForcedDeleteIsAdmins(t *testing.T) {
	s := service.New(testdb.SQLite(t), storetest.Platforms)
	c := storetest.NewCluster(t, s, storetest.Alice, "prod")
	p := storetest.NewPool(t, s, c, "workers")
	for _, dry := range []bool{true, false} {
		_, _, err := s.DeleteNodePool(storetest.Ctx(storetest.Alice), p.ID, service.Delete{Force: true, DryRun: dry})
		if kpool.ErrorCode(err) != kpool.CodeForbidden {
			t.Fatalf("forced delete by the owner (dry run %v): %v, want FORBIDDEN", dry, err)
		}
	}
}
