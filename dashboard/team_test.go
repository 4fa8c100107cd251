package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// TestTeamPages: a member of a cluster's team reads its pages; anyone
// else gets 404 on the cluster's and its pools' pages, an empty fleet,
// and none of its changes on the live stream.
func TestTeamPages(t *testing.T) {
	svc := service.New(testdb.SQLite(t), catalog.Registry())
	admin := storetest.Ctx(storetest.Admin)
	c, err := svc.CreateCluster(admin, service.ClusterCreate{Name: "shared", Team: "platform", Spec: storetest.ClusterSpec(owner, "shared")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.CreateNodePool(admin, service.NodePoolCreate{Name: "web", ClusterID: c.ID, Spec: json.RawMessage(storetest.GCPPool)})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Service: svc, Profiles: catalog.Registry(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	as := func(id *kpool.Identity) context.Context {
		return context.WithValue(kpool.WithIdentity(context.Background(), id), ctxKey{}, id)
	}
	viewer := &kpool.Identity{Email: "vera@example.com", Groups: []string{"platform:viewer"}}
	outsider := &kpool.Identity{Email: "olga@example.com", Groups: []string{"data:admin"}}
	page := func(id *kpool.Identity, fn http.HandlerFunc, path, value string) (int, string) {
		w := get(func(w http.ResponseWriter, r *http.Request) {
			if value != "" {
				r.SetPathValue("id", value)
			}
			fn(w, r)
		}, as(id), path)
		return w.Code, w.Body.String()
	}
	for _, tc := range []struct {
		who        *kpool.Identity
		status     int
		fleetNames bool
	}{
		{viewer, http.StatusOK, true},
		{outsider, http.StatusNotFound, false},
	} {
		if code, _ := page(tc.who, h.cluster, "/clusters/"+c.ID, c.ID); code != tc.status {
			t.Errorf("%s: cluster page %d, want %d", tc.who.Email, code, tc.status)
		}
		if code, _ := page(tc.who, h.pool, "/nodepools/"+p.ID, p.ID); code != tc.status {
			t.Errorf("%s: pool page %d, want %d", tc.who.Email, code, tc.status)
		}
		if _, body := page(tc.who, h.fleet, "/", ""); strings.Contains(body, ">shared<") != tc.fleetNames {
			t.Errorf("%s: the fleet names the team's cluster: %v, want %v", tc.who.Email, !tc.fleetNames, tc.fleetNames)
		}
		ch := []change{{Type: kpool.EventNodePoolUpdated, ObjectID: p.ID, ClusterID: c.ID, owner: storetest.Admin, team: "platform"}}
		if got := len(seen(tc.who, ch)); (got == 1) != tc.fleetNames {
			t.Errorf("%s: the live stream passes %d of the team's changes", tc.who.Email, got)
		}
	}
}
