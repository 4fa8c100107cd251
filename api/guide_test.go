package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// TestGuideWorkflow runs every request of the NodePools user guide as the
// guide writes it (only the pool id that the server returns is substituted
// for the guide's example id).
func TestGuideWorkflow(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		r := a.as(user, "POST", "/api/v1/clusters", `{"id":"`+guideClusterID+`","name":"prod","spec":`+gcpCluster+`}`)
		want(t, r, http.StatusCreated)

		// 1. Create NodePool, the nested form with cluster_id in the body too.
		r = a.as(user, "POST", "/api/v1/clusters/"+guideClusterID+"/nodepools", `{
  "name": "worker-pool-1",
  "cluster_id": "550e8400-e29b-41d4-a716-446655440000",
  "spec": {
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-4",
        "diskSize": 100,
        "diskType": "pd-ssd",
        "zones": ["us-central1-a", "us-central1-b"],
        "preemptible": false
      }
    },
    "autoscaling": {
      "enabled": true,
      "minNodes": 1,
      "maxNodes": 10
    },
    "nodeCount": 3
  }
}`)
		want(t, r, http.StatusCreated)
		var first map[string]any
		r.json(t, &first)
		for _, k := range []string{"id", "name", "cluster_id", "generation", "resource_version", "spec", "created_at", "updated_at", "created_by"} {
			if _, ok := first[k]; !ok {
				t.Fatalf("create response lacks %q: %s", k, r.body)
			}
		}
		if first["generation"].(float64) != 1 || first["created_by"] != user || first["cluster_id"] != guideClusterID {
			t.Fatalf("create response: %s", r.body)
		}
		if loc := r.header.Get("Location"); loc != "/api/v1/nodepools/"+first["id"].(string) {
			t.Fatalf("Location %q", loc)
		}

		// Complete Example Workflow, 1: create with POST /api/v1/nodepools.
		r = a.do("POST", "/api/v1/nodepools", `{
    "name": "production-workers",
    "cluster_id": "550e8400-e29b-41d4-a716-446655440000",
    "spec": {
      "platform": {
        "type": "gcp",
        "gcp": {
          "machineType": "n1-standard-4",
          "diskSize": 100,
          "diskType": "pd-ssd",
          "zones": ["us-central1-a", "us-central1-b"]
        }
      },
      "autoscaling": {
        "enabled": true,
        "minNodes": 2,
        "maxNodes": 10
      },
      "nodeCount": 3
    }
  }`, "Content-Type: application/json", "X-User-Email: user@example.com")
		want(t, r, http.StatusCreated)
		var pw kpool.NodePool
		r.json(t, &pw)

		// 2. Monitor status.
		r = a.do("GET", "/api/v1/nodepools/"+pw.ID+"/status", "", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var st service.StatusDocument
		r.json(t, &st)
		if st.NodePoolID != pw.ID || st.ControllerStatus == nil || len(st.ControllerStatus) != 0 || st.Status.Phase != kpool.PhasePending {
			t.Fatalf("status of a new pool: %s", r.body)
		}

		// 3. Scale the NodePool: a PUT with part of the spec keeps the rest.
		r = a.do("PUT", "/api/v1/nodepools/"+pw.ID, `{
    "name": "production-workers",
    "spec": {
      "platform": {
        "type": "gcp",
        "gcp": {
          "machineType": "n1-standard-4",
          "diskSize": 100
        }
      },
      "nodeCount": 6
    }
  }`, "Content-Type: application/json", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var scaled kpool.NodePool
		r.json(t, &scaled)
		g := scaled.Spec.Platform.GCP
		if scaled.Generation != 2 || scaled.Spec.Count() != 6 || g.DiskType != "pd-ssd" || len(g.Zones) != 2 || !scaled.Spec.Autoscaling.On() {
			t.Fatalf("scaled pool: %s", r.body)
		}

		// Update NodePool Status (controllers only), the guide's body.
		r = a.do("PUT", "/api/v1/nodepools/"+pw.ID+"/status", `{
  "controller_name": "gcp-nodepool-controller",
  "observed_generation": 2,
  "conditions": [
    {
      "type": "Ready",
      "status": "True",
      "lastTransitionTime": "2025-10-17T10:30:00Z",
      "reason": "NodesReady",
      "message": "All nodes are ready and healthy"
    }
  ],
  "metadata": {
    "platform": "gcp",
    "region": "us-central1",
    "active_nodes": 5,
    "desired_nodes": 5,
    "node_ages": "2h30m,1h45m,1h15m,45m,30m"
  }
}`, "Content-Type: application/json", "X-User-Email: "+controller)
		want(t, r, http.StatusOK)
		r = a.as(user, "GET", "/api/v1/nodepools/"+pw.ID+"/status", "")
		r.json(t, &st)
		if len(st.ControllerStatus) != 1 || st.ControllerStatus[0].ObservedGeneration != 2 || st.Status.Phase != kpool.PhaseReady || st.Status.ObservedGeneration != 2 {
			t.Fatalf("status after the controller's report: %s", r.body)
		}
		var meta map[string]any
		if err := json.Unmarshal(st.ControllerStatus[0].Metadata, &meta); err != nil || meta["node_ages"] != "2h30m,1h45m,1h15m,45m,30m" {
			t.Fatalf("metadata not kept: %s", st.ControllerStatus[0].Metadata)
		}
		if c := st.ControllerStatus[0].Conditions[0]; c.LastTransitionTime.Format("2006-01-02T15:04:05Z") != "2025-10-17T10:30:00Z" {
			t.Fatalf("the controller's transition time was not kept: %+v", c)
		}

		// List with the guide's query.
		r = a.do("GET", "/api/v1/nodepools?limit=10&status=Ready", "", "X-User-Email: user@example.com")
		want(t, r, http.StatusOK)
		var list NodePoolList
		r.json(t, &list)
		if list.Total != 1 || list.Limit != 10 || list.Offset != 0 || list.NodePools[0].ID != pw.ID {
			t.Fatalf("list: %s", r.body)
		}
		r = a.as(user, "GET", "/api/v1/clusters/"+guideClusterID+"/nodepools", "")
		r.json(t, &list)
		if list.Total != 2 {
			t.Fatalf("nested list: %s", r.body)
		}

		// Get NodePool.
		r = a.as(user, "GET", "/api/v1/nodepools/"+pw.ID, "")
		want(t, r, http.StatusOK)
		if etag := r.header.Get("ETag"); etag == "" {
			t.Fatal("no ETag")
		}

		// 4. Update NodePool, the guide's body, renames the pool: refused.
		r = a.as(user, "PUT", "/api/v1/nodepools/"+first["id"].(string), `{
  "name": "worker-pool-1-updated",
  "spec": {
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-8",
        "diskSize": 200
      }
    },
    "nodeCount": 5
  }
}`)
		e := wantError(t, r, http.StatusBadRequest, kpool.CodeValidation, "immutable")
		if len(e.Fields) != 1 || e.Fields[0].Field != "name" {
			t.Fatalf("rename error fields: %+v", e.Fields)
		}
		// Nothing of that update was applied.
		r = a.as(user, "GET", "/api/v1/nodepools/"+first["id"].(string), "")
		var unchanged kpool.NodePool
		r.json(t, &unchanged)
		if unchanged.Generation != 1 || unchanged.Spec.Platform.GCP.MachineType != "n1-standard-4" {
			t.Fatalf("a refused update changed the pool: %s", r.body)
		}

		// Error Handling: the guide's conflict message.
		r = a.as(user, "POST", "/api/v1/nodepools", `{"name":"production-workers","cluster_id":"`+guideClusterID+`","spec":`+gcpPool+`}`)
		wantError(t, r, http.StatusConflict, kpool.CodeConflict, "NodePool with name 'production-workers' already exists in cluster")
		wantError(t, a.as(user, "GET", "/api/v1/nodepools/123e4567-e89b-12d3-a456-426614174000", ""), http.StatusNotFound, kpool.CodeNotFound, "NodePool not found")
		wantError(t, a.as(user, "POST", "/api/v1/nodepools", `{"cluster_id":"`+guideClusterID+`","spec":`+gcpPool+`}`), http.StatusBadRequest, kpool.CodeValidation, "name: required")

		// Autoscaling Configuration, applied to a pool.
		r = a.as(user, "PUT", "/api/v1/nodepools/"+pw.ID, `{"spec":{
    "autoscaling": {
      "enabled": true,
      "minNodes": 1,
      "maxNodes": 20,
      "targetCPUUtilization": 70,
      "targetMemoryUtilization": 80,
      "scaleDownDelay": "10m",
      "scaleUpDelay": "3m"
    }
  }}`)
		want(t, r, http.StatusOK)

		// 5. Delete NodePool: 204 for a pool no controller has reported on.
		r = a.as(user, "DELETE", "/api/v1/nodepools/"+first["id"].(string), "")
		want(t, r, http.StatusNoContent)
		// and 202 Deleting for one a controller manages.
		r = a.as(user, "DELETE", "/api/v1/nodepools/"+pw.ID, "")
		want(t, r, http.StatusAccepted)
		var del kpool.NodePool
		r.json(t, &del)
		if del.Status.Phase != kpool.PhaseDeleting {
			t.Fatalf("deleting pool: %s", r.body)
		}
	})
}

// TestGuidePlatformExamples creates a pool from each platform example of the
// guide on a cluster of that platform.
func TestGuidePlatformExamples(t *testing.T) {
	a := newTestAPI(t, testdb.SQLite)
	examples := []struct{ cluster, pool string }{
		{gcpCluster, `{
    "nodeCount": 2,
    "platform": {
      "type": "gcp",
      "gcp": {
        "machineType": "n1-standard-4",
        "diskSize": 100,
        "diskType": "pd-ssd",
        "zones": ["us-central1-a", "us-central1-b"],
        "preemptible": false,
        "accelerators": [
          {
            "type": "nvidia-tesla-v100",
            "count": 1
          }
        ],
        "labels": {
          "environment": "production",
          "team": "platform"
        },
        "taints": [
          {
            "key": "workload-type",
            "value": "gpu",
            "effect": "NoSchedule"
          }
        ]
      }
    }
  }`},
		{`{"platform":{"type":"aws","aws":{"region":"us-west-2","clusterName":"prod","nodeRoleArn":"arn:aws:iam::123456789012:role/eks-nodes",
			"subnets":{"us-west-2a":"subnet-0123456789abcdef0","us-west-2b":"subnet-0123456789abcdef1"}}}}`, `{
    "platform": {
      "type": "aws",
      "aws": {
        "instanceType": "m5.xlarge",
        "volumeSize": 100,
        "volumeType": "gp3",
        "availabilityZones": ["us-west-2a", "us-west-2b"],
        "spotInstances": false,
        "userData": "#!/bin/bash\necho 'Custom initialization'"
      }
    }
  }`},
		{`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-111122223333","resourceGroup":"rg","clusterName":"prod"}}}`, `{
    "platform": {
      "type": "azure",
      "azure": {
        "vmSize": "Standard_D4s_v3",
        "osDiskSizeGB": 100,
        "osDiskType": "Premium_LRS",
        "availabilityZones": ["1", "2"],
        "spotInstances": false
      }
    }
  }`},
	}
	for i, ex := range examples {
		c := a.cluster(user, fmt.Sprintf("c%d", i), ex.cluster)
		r := a.as(user, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", `{"name":"example","spec":`+ex.pool+`}`)
		want(t, r, http.StatusCreated)
		var p kpool.NodePool
		r.json(t, &p)
		// The GKE example sets 2 nodes (GKE keeps as many in each of its two
		// zones); the others default to 1.
		wantCount := 1
		if ex.cluster == gcpCluster {
			wantCount = 2
		}
		if p.Spec.Count() != wantCount || p.Spec.Mode != kpool.ModeUser {
			t.Fatalf("defaults: %s", r.body)
		}
	}
}
