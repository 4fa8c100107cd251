package sim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/kpool/kpool/cloudsim/sim"
)

// TestCallCounts: the engine counts every call it answers by the operation
// its route names, unrouted ones together, beyond the call log's cap; GET
// AdminPrefix+"calls" serves the counts, and admin calls are not counted.
func TestCallCounts(t *testing.T) {
	ok := func(r *sim.Request) *sim.Reply { return sim.NewReply(http.StatusOK) }
	rt := sim.NewRouter(func(r *sim.Request) *sim.Reply { return sim.NewReply(http.StatusNotFound) }, ok)
	rt.Handle("GET /v1/pools/{pool}", ok)
	rt.Handle("POST /v1/pools", func(r *sim.Request) *sim.Reply {
		r.SetOperation("CreatePool") // a protocol may name its operations itself
		return sim.NewReply(http.StatusOK)
	})
	e := sim.New(sim.Options{MaxCalls: 2}, sim.Protocol{Routes: rt.Serve})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/pools/a"}, {"GET", "/v1/pools/b"}, {"GET", "/v1/pools/c"}, {"POST", "/v1/pools"}, {"GET", "/nowhere"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	want := sim.CallCounts{Total: 5, Operations: []sim.OperationCount{
		{Operation: "GET /v1/pools/{pool}", Calls: 3}, {Operation: "(unrouted)", Calls: 1}, {Operation: "CreatePool", Calls: 1},
	}}
	for i := 0; i < 2; i++ { // asking is not a call
		res, err := http.Get(srv.URL + sim.AdminPrefix + "calls")
		if err != nil {
			t.Fatal(err)
		}
		var got sim.CallCounts
		err = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || got.Total != want.Total || !slices.Equal(got.Operations, want.Operations) {
			t.Fatalf("calls: %d %+v %v, want %+v", res.StatusCode, got, err, want)
		}
	}
	// ReadCallCounts is the client side of the same.
	if got, err := sim.ReadCallCounts(context.Background(), srv.Client(), srv.URL); err != nil ||
		got.Total != want.Total || !slices.Equal(got.Operations, want.Operations) {
		t.Fatalf("ReadCallCounts: %+v %v, want %+v", got, err, want)
	}
	if _, err := sim.ReadCallCounts(context.Background(), srv.Client(), srv.URL+"/nowhere"); err == nil {
		t.Error("ReadCallCounts of a path that is no emulator: no error")
	}
	if n := len(e.Calls()); n > 2 {
		t.Errorf("the call log holds %d calls, more than its cap of 2 (the counts go beyond it)", n)
	}
	res, err := http.Post(srv.URL+sim.AdminPrefix+"calls", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST calls: %d, want 405", res.StatusCode)
	}
}
