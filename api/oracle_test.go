package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestTakenIDsTellNothing checks that a create with an id in use answers the
// same 409, naming neither the object nor its id, whether the id is the
// caller's own or another user's (D12: it used to say "Cluster with id X
// already exists" only where the id was taken, an oracle for other users'
// ids).
func TestTakenIDsTellNothing(t *testing.T) {
	const (
		clusterID = "0e5e3d43-6a3b-4c2f-9a53-6e0a3c1f0a01"
		poolID    = "0e5e3d43-6a3b-4c2f-9a53-6e0a3c1f0a02"
	)
	pool := func(name, id string) string {
		return `{"id":"` + id + `","name":"` + name + `","spec":{"platform":{"gcp":{"machineType":"n1-standard-4"}},"nodeCount":1}}`
	}
	forEachStore(t, func(t *testing.T, a *testAPI) {
		want(t, a.as(user, "POST", "/api/v1/clusters", `{"id":"`+clusterID+`","name":"a","spec":`+strings.Replace(gcpCluster, `"prod"`, `"oracle-a"`, 1)+`}`), http.StatusCreated)
		want(t, a.as(user, "POST", "/api/v1/clusters/"+clusterID+"/nodepools", pool("p1", poolID)), http.StatusCreated)
		mine := a.cluster(other, "b", gcpCluster)

		for _, c := range []struct {
			name        string
			own, others reply
		}{
			{"cluster",
				a.as(user, "POST", "/api/v1/clusters", `{"id":"`+clusterID+`","name":"a2","spec":`+gcpCluster+`}`),
				a.as(other, "POST", "/api/v1/clusters", `{"id":"`+clusterID+`","name":"b2","spec":`+gcpCluster+`}`)},
			{"pool",
				a.as(user, "POST", "/api/v1/clusters/"+clusterID+"/nodepools", pool("p2", poolID)),
				a.as(other, "POST", "/api/v1/clusters/"+mine.ID+"/nodepools", pool("p2", poolID))},
		} {
			own := wantError(t, c.own, http.StatusConflict, kpool.CodeConflict, "id is taken")
			theirs := wantError(t, c.others, http.StatusConflict, kpool.CodeConflict, "id is taken")
			if own.Message != theirs.Message || own.Details != theirs.Details {
				t.Errorf("%s: the owner gets %+v, another user %+v: want the same answer", c.name, own, theirs)
			}
			for _, id := range []string{clusterID, poolID, "p1", user} {
				if strings.Contains(string(c.others.body), id) {
					t.Errorf("%s: another user's answer %s names %s", c.name, c.others.body, id)
				}
			}
		}
	})
}
