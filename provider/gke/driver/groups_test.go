package driver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/providertest"
)

// aggregated is a hand-made answer of Compute's
// instanceGroupManagers.aggregatedList whose zones carry no group, each
// with the warning given (NO_RESULTS_ON_PAGE: the zone has none;
// UNREACHABLE: "A given scope cannot be reached"), as compute-api.json
// shapes InstanceGroupManagersScopedList.
func aggregated(r *http.Request, warnings map[string]string) *http.Response {
	items := map[string]any{}
	for z, code := range warnings {
		items["zones/"+z] = map[string]any{"warning": map[string]any{"code": code, "message": "scope zones/" + z,
			"data": []map[string]string{{"key": "scope", "value": "zones/" + z}}}}
	}
	b, _ := json.Marshal(map[string]any{"kind": "compute#instanceGroupManagerAggregatedList", "items": items})
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}
}

// TestGroupsReadOneByOne: when the aggregated list cannot say whether a
// group is there (its zone unreachable, or the list refused permission
// while a get is allowed), the driver reads that group on its own rather
// than counting it gone or failing the list.
func TestGroupsReadOneByOne(t *testing.T) {
	denied := `{"error":{"code":403,"message":"Required 'compute.instanceGroupManagers.list' permission for 'projects/p'","errors":[{"message":"Required 'compute.instanceGroupManagers.list' permission for 'projects/p'","domain":"global","reason":"forbidden"}]}}`
	for name, answer := range map[string]func(r *http.Request) *http.Response{
		"unreachable": func(r *http.Request) *http.Response {
			return aggregated(r, map[string]string{"us-central1-a": "UNREACHABLE", "us-central1-b": "NO_RESULTS_ON_PAGE"})
		},
		"denied": func(r *http.Request) *http.Response {
			return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(denied)), Request: r}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEmulated(t)
			s := e.spec("a", "1")
			if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, s); err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(time.Hour)
			gets := 0
			rt := roundTrip(func(r *http.Request) (*http.Response, error) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/aggregated/instanceGroupManagers"):
					return answer(r), nil
				case strings.Contains(r.URL.Path, "/instanceGroupManagers/"):
					gets++
				}
				return e.driverTransport().RoundTrip(r)
			})
			d := setup.Driver(t, rt, providertest.FastRetry(), e.URL)
			pools, err := d.NodePoolList(ctx, e.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := provider.Find(pools, "a")
			if !ok || p.Count != s.Count || p.ReadyNodes != s.Count || p.State != provider.StateReady || gets != 1 {
				t.Fatalf("a: %+v after %d gets; want its %d nodes, read by one get", p, gets, s.Count)
			}
		})
	}
}

// TestListCostsNoCallPerPool: a list pass sends GKE's list and one
// aggregated list of the instance groups, filtered to the names the pools'
// groups share (their cluster's gke-CLUSTER- prefix), however many pools
// and zones the cluster has.
func TestListCostsNoCallPerPool(t *testing.T) {
	e := newEmulated(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec(n, "1", "2")); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)
	}
	if _, err := e.Driver.NodePoolList(ctx, e.Cluster); err != nil { // forgets the creates' operations
		t.Fatal(err)
	}
	before := len(e.Sim.Calls())
	pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	calls := e.Sim.Calls()[before:]
	if len(calls) != 2 || !strings.HasSuffix(calls[1].Path, "/aggregated/instanceGroupManagers") ||
		!strings.Contains(calls[1].Query, "filter=name+eq+%22gke-gke-prod-.%2A%22") {
		t.Fatalf("a list pass sent %+v", calls)
	}
	for _, p := range pools {
		if p.Count != 4 || p.ReadyNodes != 4 || p.NodesByZone["1"] != 2 || p.NodesByZone["2"] != 2 {
			t.Errorf("%s: count %d, ready %d, by zone %v", p.ProviderName, p.Count, p.ReadyNodes, p.NodesByZone)
		}
	}
}
