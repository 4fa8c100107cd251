package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

const owner = "ops@example.com"

// fleet is a dashboard on an SQLite store holding clusters×pools pools
// (AKS), every fifth pool Failed, and a signed-in request's context.
func fleetOf(tb testing.TB, clusters, pools int) (*Handler, context.Context) {
	tb.Helper()
	reg := catalog.Registry()
	svc := service.New(testdb.SQLite(tb), reg)
	ctx := storetest.Ctx(owner)
	controller := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: "controllers@kpool.internal", Controller: true})
	for c := range clusters {
		cl, err := svc.CreateCluster(ctx, service.ClusterCreate{Name: fmt.Sprintf("c%02d", c), Spec: json.RawMessage(fmt.Sprintf(
			`{"platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-1111222233%02d","resourceGroup":"rg","clusterName":"c%02d","location":"westeurope"}}}`, c, c))})
		if err != nil {
			tb.Fatal(err)
		}
		for p := range pools {
			np, err := svc.CreateNodePool(ctx, service.NodePoolCreate{Name: fmt.Sprintf("p%03d", p), ClusterID: cl.ID,
				Spec: json.RawMessage(`{"platform":{"azure":{"vmSize":"Standard_D4s_v5"}},"nodeCount":3,"zones":["1","2","3"],"labels":{"team":"t` + fmt.Sprint(p%4) + `"}}`)})
			if err != nil {
				tb.Fatal(err)
			}
			cond := `[{"type":"Ready","status":"True","reason":"NodesReady"}]`
			if p%5 == 0 {
				cond = `[{"type":"Ready","status":"False","reason":"ProviderRefused","message":"quota exceeded"},{"type":"Degraded","status":"True","reason":"ProviderRefused","message":"quota exceeded"}]`
			}
			var cs kpool.ControllerStatus
			_ = json.Unmarshal([]byte(`{"controller_name":"test-controller","observed_generation":1,"conditions":`+cond+
				`,"metadata":{"active_nodes":3,"desired_nodes":3,"nodes_by_zone":{"1":1,"2":1,"3":1},"last_error":"quota exceeded","failed_generation":1}}`), &cs)
			if _, err := svc.ReportNodePoolStatus(controller, np.ID, cs); err != nil {
				tb.Fatal(err)
			}
		}
	}
	h := New(Options{Service: svc, Profiles: reg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	id := &kpool.Identity{Email: owner}
	return h, context.WithValue(kpool.WithIdentity(context.Background(), id), ctxKey{}, id)
}

func get(h http.HandlerFunc, ctx context.Context, url string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, url, nil).WithContext(ctx)
	h(w, r)
	return w
}

// TestFleetView: clusters by provider, counts per phase, the pools needing
// attention named, and each filter.
func TestFleetView(t *testing.T) {
	h, ctx := fleetOf(t, 2, 10)
	body := get(h.fleet, ctx, "/").Body.String()
	for _, want := range []string{"2 clusters, 20 pools", "⚠ 4 need attention", "<h2>AKS <small>(2 clusters)</small></h2>", "is Degraded: "} {
		if !strings.Contains(body, want) {
			t.Errorf("fleet view: no %q", want)
		}
	}
	for _, tc := range []struct{ query, want, not string }{
		{"?phase=Degraded", "4 pools", "p001"},
		{"?q=p00", "20 pools", "p011"},
		{"?label=team%3Dt1", "6 pools", "p002"},
		{"?cluster=c01", "1 clusters, 10 pools", "c00"},
		{"?provider=gcp", "0 pools", "c00"},
	} {
		body := get(h.fleet, ctx, "/"+tc.query).Body.String()
		if !strings.Contains(body, tc.want) || (tc.not != "" && strings.Contains(body, ">"+tc.not+"<")) {
			t.Errorf("%s: want %q and no %q", tc.query, tc.want, tc.not)
		}
	}
}

// BenchmarkFleetPage is the first paint of the fleet view of 1,000 pools
// in 20 clusters: the page is rendered on the server in one answer, so
// this is the time to its first byte and, the page being static HTML and
// CSS, to its first paint.
func BenchmarkFleetPage(b *testing.B) {
	h, ctx := fleetOf(b, 20, 50)
	b.ResetTimer()
	for b.Loop() {
		if w := get(h.fleet, ctx, "/"); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkClusterPage is a cluster view of 50 pools, each with its
// controller's report read (nodes per zone, last error).
func BenchmarkClusterPage(b *testing.B) {
	h, ctx := fleetOf(b, 20, 50)
	clusters, _ := h.o.Service.Clusters(ctx, service.ListOptions{Limit: 1})
	id := clusters.Items[0].ID
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/clusters/"+id, nil).WithContext(ctx)
		r.SetPathValue("id", id)
		w := httptest.NewRecorder()
		h.cluster(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkLiveRefresh is what a page pays for a burst of changes: the
// browser waits 400 ms after the first and fetches its live fragment once,
// so 100 pools changing state cost one of these, not a hundred.
func BenchmarkLiveRefresh(b *testing.B) {
	h, ctx := fleetOf(b, 20, 50)
	b.ResetTimer()
	for b.Loop() {
		if w := get(h.fleet, ctx, "/?fragment=main"); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// TestLiveFanOut: a change reaches the watchers that may read it, a slow
// watcher is told to resync instead of blocking the feed.
func TestLiveFanOut(t *testing.T) {
	b := newBroadcaster()
	fast, slow := b.subscribe(), b.subscribe()
	for i := range 20 {
		b.publish([]change{{Type: "nodepool.updated", ObjectID: fmt.Sprint(i)}})
		<-fast
	}
	got := 0
	resync := false
	for len(slow) > 0 {
		cs := <-slow
		got++
		resync = resync || cs[0].Type == "resync"
	}
	if got == 0 || got > 16 || !resync {
		t.Fatalf("slow watcher got %d batches, resync %v", got, resync)
	}
	b.unsubscribe(fast)
	b.unsubscribe(slow)
	b.publish([]change{{Type: "x"}}) // nobody left: must not block
}

// TestSignIn: no identity, no data; a wrong token is refused on the form;
// a good one is kept in an HttpOnly, SameSite=Strict cookie that opens the
// pages; a redirect target off the site is not followed.
func TestSignIn(t *testing.T) {
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	tok, err := auth.CheckToken(auth.TokenRequest{User: owner, Role: kpool.RoleUser}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := ts.CreateToken(t.Context(), tok, hash); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Service: service.New(st, catalog.Registry()), Access: auth.NewTokenAccess(ts), Profiles: catalog.Registry(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noFollow.Get(srv.URL + "/clusters/x")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=/clusters/x" {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := noFollow.Get(srv.URL + "/live"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous live feed: %d", resp.StatusCode)
	}
	post := func(token, next string) *http.Response {
		resp, err := noFollow.PostForm(srv.URL+"/login", map[string][]string{"token": {token}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	bad := post("kpool_not-a-token", "/")
	body, _ := io.ReadAll(bad.Body)
	if bad.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "not valid") || len(bad.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, %d cookies", bad.StatusCode, len(bad.Cookies()))
	}
	good := post(secret, "//evil.example/")
	cookies := good.Cookies()
	if good.StatusCode != http.StatusSeeOther || good.Header.Get("Location") != "/" || len(cookies) != 1 ||
		!cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != auth.SessionCookie {
		t.Fatalf("a good token: %d to %q, cookies %+v", good.StatusCode, good.Header.Get("Location"), cookies)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.AddCookie(cookies[0])
	page, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(page.Body)
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), owner) || strings.Contains(string(body), secret) ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("signed in: %d, the page shows the token: %v", page.StatusCode, strings.Contains(string(body), secret))
	}
}
