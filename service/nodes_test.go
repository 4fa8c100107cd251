package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// fakeNodes is a NodeSource with a fixed set of nodes per cluster, which
// counts its reads.
type fakeNodes struct {
	byCluster map[string][]kpool.Node
	reads     int
}

func (f *fakeNodes) ClusterNodes(_ context.Context, c *kpool.Cluster) ([]kpool.Node, error) {
	f.reads++
	return f.byCluster[c.ID], nil
}

// fakeKube is a KubeProxy that says which cluster it was asked for.
type fakeKube struct{ asked []string }

func (f *fakeKube) KubeTransport(_ context.Context, c *kpool.Cluster) (*url.URL, http.RoundTripper, error) {
	f.asked = append(f.asked, c.ID)
	return &url.URL{Scheme: "https", Host: "127.0.0.1:1", Path: "/k8s/" + c.ID}, http.DefaultTransport, nil
}

// nodesWorld is Alice's cluster with pools web and db, and Bob's cluster
// with a pool web, whose nodes the fake source holds (unsorted, one of no
// pool).
func nodesWorld(t *testing.T) (*service.Service, *fakeNodes, *kpool.Cluster, *kpool.NodePool, *kpool.NodePool) {
	t.Helper()
	s := service.New(testdb.SQLite(t), storetest.Platforms)
	c := storetest.NewCluster(t, s, storetest.Alice, "prod")
	web, db := storetest.NewPool(t, s, c, "web"), storetest.NewPool(t, s, c, "db")
	bc := storetest.NewCluster(t, s, storetest.Bob, "bobs")
	storetest.NewPool(t, s, bc, "web")
	now := time.Now().UTC()
	src := &fakeNodes{byCluster: map[string][]kpool.Node{
		c.ID: {
			{Name: "n-web-2", Pool: web.ProviderName, Ready: true, CreatedAt: now},
			{Name: "n-db-1", Pool: db.ProviderName, Ready: true, CreatedAt: now},
			{Name: "n-web-1", Pool: web.ProviderName, Cordoned: true, CreatedAt: now, MissingLabels: []string{"kompox.dev/node-zone"}},
			{Name: "n-system", CreatedAt: now},
		},
		bc.ID: {{Name: "b-web-1", Pool: web.ProviderName, Ready: true, CreatedAt: now}},
	}}
	s.Nodes = src
	return s, src, c, web, db
}

func names(ns []kpool.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

// TestPoolNodes: a pool's nodes are its cluster's nodes whose pool label
// names its provider name, sorted by name; whoever may not read the pool
// is answered as a read of the pool would answer (NOT_FOUND, before the
// cluster's API is read), and a pool asked for under another cluster is
// NOT_FOUND.
func TestPoolNodes(t *testing.T) {
	s, src, c, web, db := nodesWorld(t)
	alice := storetest.Ctx(storetest.Alice)
	got, err := s.PoolNodes(alice, c.ID, web.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"n-web-1", "n-web-2"}; !slices.Equal(names(got), want) {
		t.Fatalf("web's nodes: %v, want %v", names(got), want)
	}
	if !got[0].Cordoned || !slices.Equal(got[0].MissingLabels, []string{"kompox.dev/node-zone"}) {
		t.Errorf("n-web-1 lost what the source said of it: %+v", got[0])
	}
	if got, _ := s.PoolNodes(alice, c.ID, db.ID); !slices.Equal(names(got), []string{"n-db-1"}) {
		t.Errorf("db's nodes: %v", names(got))
	}
	for _, as := range []string{storetest.Admin, storetest.Controller} {
		if got, err := s.PoolNodes(storetest.Ctx(as), c.ID, web.ID); err != nil || len(got) != 2 {
			t.Errorf("%s: %v %v", as, names(got), err)
		}
	}
	reads := src.reads
	_, readErr := s.NodePool(storetest.Ctx(storetest.Bob), web.ID)
	_, err = s.PoolNodes(storetest.Ctx(storetest.Bob), c.ID, web.ID)
	if kpool.ErrorCode(err) != kpool.CodeNotFound || kpool.ErrorCode(err) != kpool.ErrorCode(readErr) {
		t.Errorf("Bob reading Alice's pool's nodes: %v; reading the pool: %v; want both NOT_FOUND", err, readErr)
	}
	if src.reads != reads {
		t.Errorf("the cluster's nodes were read for a caller who may not see the pool")
	}
	other := storetest.NewCluster(t, s, storetest.Alice, "other")
	if _, err := s.PoolNodes(alice, other.ID, web.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("web under another cluster: %v, want NOT_FOUND", err)
	}
	if _, err := s.PoolNodes(context.Background(), c.ID, web.ID); kpool.ErrorCode(err) != kpool.CodeUnauthorized {
		t.Errorf("no identity: %v, want UNAUTHORIZED", err)
	}
}

// TestClusterNodes: every node of a cluster, sorted, to its viewers; the
// Kubernetes transport to the same callers only.
func TestClusterNodes(t *testing.T) {
	s, _, c, _, _ := nodesWorld(t)
	got, err := s.ClusterNodes(storetest.Ctx(storetest.Alice), c.ID)
	if want := []string{"n-db-1", "n-system", "n-web-1", "n-web-2"}; err != nil || !slices.Equal(names(got), want) {
		t.Fatalf("cluster's nodes: %v %v, want %v", names(got), err, want)
	}
	if _, err := s.ClusterNodes(storetest.Ctx(storetest.Bob), c.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("Bob: %v, want NOT_FOUND", err)
	}
	kube := &fakeKube{}
	s.Kube = kube
	if u, rt, err := s.KubeTransport(storetest.Ctx(storetest.Alice), c.ID); err != nil || rt == nil || u.Path != "/k8s/"+c.ID {
		t.Errorf("Alice's transport: %v %v", u, err)
	}
	if _, _, err := s.KubeTransport(storetest.Ctx(storetest.Bob), c.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("Bob's transport: %v, want NOT_FOUND", err)
	}
	if len(kube.asked) != 1 {
		t.Errorf("the proxy was asked for %d transports, want Alice's one", len(kube.asked))
	}
}

// TestNodesNotConfigured: a kpool with no node source or proxy says so
// with NOT_IMPLEMENTED, after the visibility check.
func TestNodesNotConfigured(t *testing.T) {
	s, _, c, web, _ := nodesWorld(t)
	s.Nodes = nil
	alice := storetest.Ctx(storetest.Alice)
	_, err1 := s.PoolNodes(alice, c.ID, web.ID)
	_, err2 := s.ClusterNodes(alice, c.ID)
	_, _, err3 := s.KubeTransport(alice, c.ID)
	for i, err := range []error{err1, err2, err3} {
		if kpool.ErrorCode(err) != kpool.CodeNotImplemented {
			t.Errorf("call %d: %v, want NOT_IMPLEMENTED", i, err)
		}
	}
	if _, err := s.ClusterNodes(storetest.Ctx(storetest.Bob), c.ID); kpool.ErrorCode(err) != kpool.CodeNotFound {
		t.Errorf("Bob, unconfigured: %v, want NOT_FOUND", err)
	}
}

// TestNodeLabelsValidated: spec.nodeLabels is "" or "guide", on create and
// update, and anything else is a field error naming it.
func TestNodeLabelsValidated(t *testing.T) {
	s := service.New(testdb.SQLite(t), storetest.Platforms)
	alice := storetest.Ctx(storetest.Alice)
	spec := func(v string) json.RawMessage {
		var m map[string]any
		if err := json.Unmarshal(storetest.ClusterSpec(storetest.Alice, "x"), &m); err != nil {
			t.Fatal(err)
		}
		m["nodeLabels"] = v
		b, _ := json.Marshal(m)
		return b
	}
	c, err := s.CreateCluster(alice, service.ClusterCreate{Name: "x", Spec: spec("guide")})
	if err != nil || c.Spec.NodeLabels != kpool.NodeLabelsGuide {
		t.Fatalf("guide: %v %+v", err, c)
	}
	_, err = s.CreateCluster(alice, service.ClusterCreate{Name: "y", Spec: spec("kompox")})
	checkField(t, "create", err, "spec.nodeLabels")
	_, err = s.UpdateCluster(alice, c.ID, service.Update{Spec: json.RawMessage(`{"nodeLabels":"Guide"}`), Patch: true})
	checkField(t, "update", err, "spec.nodeLabels")
	if u, err := s.UpdateCluster(alice, c.ID, service.Update{Spec: json.RawMessage(`{"nodeLabels":""}`), Patch: true}); err != nil || u.Spec.NodeLabels != "" {
		t.Errorf("clearing nodeLabels: %v", err)
	}
}

func checkField(t *testing.T, what string, err error, field string) {
	t.Helper()
	var e *kpool.Error
	if kpool.ErrorCode(err) != kpool.CodeValidation || !asError(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != field || e.Fields[0].Reason == "" {
		t.Errorf("%s: %v, want VALIDATION_ERROR on %s with a reason", what, err, field)
	}
}
