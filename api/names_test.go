package api

import (
	"context"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/store/testdb"
)

// TestNames: an ID is an ID in any case and as -o name prints it; a name is
// found with ?name=, narrowed to a cluster for a pool; no match is
// NOT_FOUND and several are VALIDATION_ERROR listing each.
func TestNames(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, testdb.SQLite)
	prod := a.cluster(user, "prod", gcpCluster)
	stage := a.cluster(user, "stage", gcpCluster)
	a.cluster(other, "stage", gcpCluster) // another owner's: only an admin sees both
	web := a.pool(user, prod.ID, "web")
	webStage := a.pool(user, stage.ID, "web")
	apiPool := a.pool(user, stage.ID, "api")
	mine, root := NewClient(a.srv.URL, user), NewClient(a.srv.URL, admin)
	ctx := context.Background()

	clusters := []struct {
		name    string
		c       *Client
		ref     string
		want    string
		code    string
		message string // in the error
	}{
		{"by name", mine, "prod", prod.ID, "", ""},
		{"an ID", mine, prod.ID, prod.ID, "", ""},
		{"an upper-case ID", mine, strings.ToUpper(prod.ID), prod.ID, "", ""},
		{"as -o name prints it", mine, "cluster/" + prod.ID, prod.ID, "", ""},
		{"an unknown ID is taken as it is", mine, "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000", "", ""},
		{"no such name", mine, "nope", "", kpool.CodeNotFound, `No cluster named "nope": kpool cluster list`},
		{"another owner's name is not seen", mine, "stage", stage.ID, "", ""},
		{"two owners' clusters, as an admin sees them", root, "stage", "", kpool.CodeValidation, `2 clusters are named "stage": give one's ID: ` + stage.ID},
	}
	for _, tt := range clusters {
		t.Run("cluster "+tt.name, func(t *testing.T) {
			got, err := tt.c.ClusterID(ctx, tt.ref)
			resolved(t, got, err, tt.want, tt.code, tt.message)
		})
	}

	pools := []struct {
		name, ref, cluster string
		want               string
		code               string
		message            string
	}{
		{"one of its name", "api", "", apiPool.ID, "", ""},
		{"an upper-case ID", strings.ToUpper(web.ID), "", web.ID, "", ""},
		{"as -o name prints it", "nodepool/" + web.ID, "", web.ID, "", ""},
		{"narrowed by the cluster's name", "web", "prod", web.ID, "", ""},
		{"narrowed by the cluster's ID", "web", stage.ID, webStage.ID, "", ""},
		{"in several clusters", "web", "", "", kpool.CodeValidation, `2 node pools are named "web": give --cluster, or one's ID: `},
		{"no such name", "nope", "", "", kpool.CodeNotFound, `No node pool named "nope": `},
		{"no such name in the cluster", "api", "prod", "", kpool.CodeNotFound, `No node pool named "api" in cluster prod`},
		{"no such cluster", "web", "nope", "", kpool.CodeNotFound, `No cluster named "nope"`},
	}
	for _, tt := range pools {
		t.Run("pool "+tt.name, func(t *testing.T) {
			got, err := mine.NodePoolID(ctx, tt.ref, tt.cluster)
			resolved(t, got, err, tt.want, tt.code, tt.message)
		})
	}
}

// resolved compares a resolved ID, or the error's code and text, with what
// is wanted.
func resolved(t *testing.T, got string, err error, want, code, message string) {
	t.Helper()
	if code == "" {
		if err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
		return
	}
	if kpool.ErrorCode(err) != code || !strings.Contains(err.Error(), message) {
		t.Errorf("got %q, %v; want %s with %q", got, err, code, message)
	}
}
