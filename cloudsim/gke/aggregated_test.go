package gke_test

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
)

// groupNames lists the project's instance groups through the official
// client's aggregatedList (every page), by zone; filter "" is none.
func (e *migEnv) groupNames(filter string, size int64) (map[string][]string, int, error) {
	out, pages := map[string][]string{}, 0
	call := e.compute.InstanceGroupManagers.AggregatedList(project).MaxResults(size)
	if filter != "" {
		call = call.Filter(filter)
	}
	err := call.Pages(ctx, func(l *compute.InstanceGroupManagerAggregatedList) error {
		pages++
		if l.Kind != "compute#instanceGroupManagerAggregatedList" || l.Id != "projects/"+project+"/aggregated/instanceGroupManagers" || !strings.HasSuffix(l.SelfLink, "/compute/v1/"+l.Id) {
			e.t.Errorf("page: kind %q, id %q, selfLink %q", l.Kind, l.Id, l.SelfLink)
		}
		for scope, sl := range l.Items {
			zone, ok := strings.CutPrefix(scope, "zones/")
			switch {
			case !ok:
				e.t.Errorf("scope %q is not a zone's", scope)
			case len(sl.InstanceGroupManagers) == 0 && (sl.Warning == nil || sl.Warning.Code != "NO_RESULTS_ON_PAGE" ||
				len(sl.Warning.Data) != 1 || sl.Warning.Data[0].Key != "scope" || sl.Warning.Data[0].Value != scope):
				e.t.Errorf("empty scope %s: warning %+v", scope, sl.Warning)
			case len(sl.InstanceGroupManagers) > 0 && sl.Warning != nil:
				e.t.Errorf("scope %s has groups and a warning", scope)
			}
			for _, g := range sl.InstanceGroupManagers {
				if !strings.HasSuffix(g.Zone, "/zones/"+zone) || g.TargetSize != 2 || g.CurrentActions.None != 2 {
					e.t.Errorf("%s in %s: zone %q, target %d, none %d", g.Name, scope, g.Zone, g.TargetSize, g.CurrentActions.None)
				}
				out[zone] = append(out[zone], g.Name)
			}
		}
		return nil
	})
	return out, pages, err
}

// TestAggregatedGroups: instanceGroupManagers.aggregatedList answers every
// group of the project by zone ("zones/ZONE", the others with
// NO_RESULTS_ON_PAGE), the same groups instanceGroupManagers.get does, in
// pages of maxResults (default and most 500) chained by nextPageToken
// (compute-api.json).
func TestAggregatedGroups(t *testing.T) {
	e := newMigEnv(t)
	all, pages, err := e.groupNames("", 0)
	if err != nil || pages != 1 || len(all) != 3 {
		t.Fatalf("aggregatedList: %v in %d pages, %v", err, pages, all)
	}
	for z, g := range e.groups {
		if !slices.Equal(all[z], []string{g}) {
			t.Errorf("zone %s: %v, want the pool's group %s", z, all[z], g)
		}
	}
	paged, pages, err := e.groupNames("", 1)
	if err != nil || pages != 3 || !maps.EqualFunc(all, paged, slices.Equal) {
		t.Fatalf("by pages of 1: %v in %d pages, %v", err, pages, paged)
	}
	// An empty scope is there with its warning (checked in groupNames).
	res := e.get(t, "/compute/v1/projects/"+project+"/aggregated/instanceGroupManagers")
	var raw struct{ Items map[string]json.RawMessage }
	if err := json.Unmarshal(res, &raw); err != nil || raw.Items["zones/europe-west1-b"] == nil || raw.Items["zones/us-central1-f"] == nil {
		t.Fatalf("every zone is a scope: %v %s", err, res)
	}
	for _, bad := range []string{"501", "-1", "x"} {
		res, code := e.getStatus(t, "/compute/v1/projects/"+project+"/aggregated/instanceGroupManagers?maxResults="+bad)
		if code != http.StatusBadRequest || !strings.Contains(string(res), `"reason":"invalid"`) {
			t.Errorf("maxResults=%s: %d %s", bad, code, res)
		}
	}
}

// TestAggregatedGroupsFilter: the filters Compute documents for its lists
// (compute-api.json, `filter`): a regular expression (RE2, the whole name)
// with eq or ne, quoted or not, or several in parentheses (AND); AIP-160's
// = and !=; anything else is refused with Compute's 400 "Invalid value for
// field 'filter': '…'. Invalid list filter expression.", reason invalid.
func TestAggregatedGroupsFilter(t *testing.T) {
	e := newMigEnv(t)
	parent := strings.TrimPrefix(base, "/v1/")
	e.done(e.svc.Projects.Locations.Clusters.NodePools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{Name: "api", InitialNodeCount: 2}}).Do())
	web := slices.Sorted(maps.Values(e.groups))
	count := func(m map[string][]string) int {
		n := 0
		for _, v := range m {
			n += len(v)
		}
		return n
	}
	for f, want := range map[string]int{
		`name eq gke-gke-prod-web-.*`:                       3,
		`name eq 'gke-gke-prod-.*'`:                         6,
		`name eq "gke-gke-prod-(web|api)-.*-grp"`:           6,
		`name ne "gke-gke-prod-web-.*"`:                     3,
		`name eq gke-gke-prod`:                              0, // the whole name must match
		`(name eq "gke-.*") (name ne ".*-api-.*")`:          3,
		`name = "` + web[0] + `"`:                           1,
		`name != ` + web[0]:                                 5,
		`name eq "gke-gke-prod-.*" `:                        6,
		` (name eq "gke-gke-prod-web-.*")  (name eq ".*") `: 3,
	} {
		got, _, err := e.groupNames(f, 0)
		if err != nil || count(got) != want {
			t.Errorf("filter %s: %v, %d groups, want %d", f, err, count(got), want)
		}
	}
	for _, f := range []string{
		`name eq *collector*`,             // no RE2 expression (prometheus/prometheus#5499)
		`zone eq .*a`,                     // a field the emulator does not filter
		`name > a`,                        // an operator it does not take
		`name = gke-*`,                    // an AIP-160 wildcard
		`(name eq a.*) (name = b)`,        // the two kinds mixed
		`(name eq a.*) AND (name eq b.*)`, // AND, OR
		`(name eq a.*`,                    // unclosed
		`name eq`,                         // no literal
		`labels.owner:*`,                  // AIP-160's has
	} {
		_, _, err := e.groupNames(f, 0)
		var ge *googleapi.Error
		msg := "Invalid value for field 'filter': '" + f + "'. Invalid list filter expression."
		if !errors.As(err, &ge) || ge.Code != 400 || ge.Message != msg || len(ge.Errors) != 1 || ge.Errors[0].Reason != "invalid" {
			t.Errorf("filter %s: %v, want Compute's 400", f, err)
		}
	}
}

// get and getStatus read a path of the emulator with the test's token.
func (e *migEnv) get(t *testing.T, path string) []byte {
	b, code := e.getStatus(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, b)
	}
	return b
}

func (e *migEnv) getStatus(t *testing.T, path string) ([]byte, int) {
	t.Helper()
	u, err := url.Parse(e.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Header.Set("Authorization", "Bearer "+googleToken)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return b, res.StatusCode
}
