package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestMessagesNameClusters: the server's and the client's messages name a
// pool's cluster by name, not only by id: a duplicate create says in which
// cluster the name is taken, a pool name that several clusters have lists
// each pool's id with its cluster's name (and owner, where two clusters
// share a name).
func TestMessagesNameClusters(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		prod := a.cluster(user, "prod", gcpCluster)
		stage := a.cluster(user, "stage", gcpCluster)
		theirs := a.cluster(other, "stage", gcpCluster)
		web, webStage := a.pool(user, prod.ID, "web"), a.pool(user, stage.ID, "web")
		api, apiTheirs := a.pool(user, stage.ID, "api"), a.pool(other, theirs.ID, "api")

		dup := a.as(user, "POST", "/api/v1/nodepools", fmt.Sprintf(`{"name":"web","cluster_id":%q,"spec":%s}`, prod.ID, gcpPool))
		wantError(t, dup, http.StatusConflict, kpool.CodeConflict, "NodePool with name 'web' already exists in cluster 'prod'")
		dry := a.as(user, "POST", "/api/v1/nodepools?dry_run=true", fmt.Sprintf(`{"name":"web","cluster_id":%q,"spec":%s}`, stage.ID, gcpPool))
		wantError(t, dry, http.StatusConflict, kpool.CodeConflict, "NodePool with name 'web' already exists in cluster 'stage'")
		lps := "/api/v1/clusters/" + stage.ID + "/logicalpools"
		want(t, a.as(user, "POST", lps, `{"name":"spread","spec":`+lpSpec+`}`), http.StatusCreated)
		wantError(t, a.as(user, "POST", lps, `{"name":"spread","spec":`+lpSpec+`}`), http.StatusConflict, kpool.CodeConflict,
			"LogicalPool with name 'spread' already exists in cluster 'stage'")

		ctx := context.Background()
		_, err := NewClient(a.srv.URL, user).NodePoolID(ctx, "web", "")
		for _, part := range []string{`2 node pools are named "web": give --cluster, or one's ID: `, web.ID + " (in prod)", webStage.ID + " (in stage)"} {
			if err == nil || !strings.Contains(err.Error(), part) {
				t.Errorf("several pools named web: %v, want it to say %q", err, part)
			}
		}
		_, err = NewClient(a.srv.URL, admin).NodePoolID(ctx, "api", "")
		for _, part := range []string{api.ID + " (in stage, registered by " + user + ")", apiTheirs.ID + " (in stage, registered by " + other + ")"} {
			if err == nil || !strings.Contains(err.Error(), part) {
				t.Errorf("pools named api in two clusters named stage: %v, want it to say %q", err, part)
			}
		}
	})
}
