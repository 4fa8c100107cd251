package gke

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The rules of Compute Engine's instanceGroupManagers.aggregatedList
// (compute: compute-api.json of google.golang.org/api/compute/v1 v0.311.0,
// the text of
// https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/aggregatedList).

// maxGroupResults is aggregatedList's page size, its default and most
// (compute, maxResults: "Acceptable values are 0 to 500, inclusive.
// (Default: 500)").
const maxGroupResults = 500

// groupScopedList is InstanceGroupManagersScopedList: a zone's groups, or
// the warning that replaces them when the page has none (compute: "The
// warning that replaces the list of managed instance groups when the list
// is empty").
type groupScopedList struct {
	InstanceGroupManagers []instanceGroupManager `json:"instanceGroupManagers,omitempty"`
	Warning               *listWarning           `json:"warning,omitempty"`
}

// listWarning is a scoped list's warning: NO_RESULTS_ON_PAGE, its message
// and the scope as data, as Compute's recorded aggregated lists carry it
// ("There are no results for scope 'zones/us-central1-a' on this page.",
// data [{"key":"scope","value":"zones/us-central1-a"}]).
type listWarning struct {
	Code    string              `json:"code"`
	Message string              `json:"message"`
	Data    []map[string]string `json:"data"`
}

// groupAggregatedList is InstanceGroupManagerAggregatedList (compute):
// the groups by scope ("zones/ZONE"), and nextPageToken while more follow.
type groupAggregatedList struct {
	Kind          string                     `json:"kind"`
	ID            string                     `json:"id"`
	Items         map[string]groupScopedList `json:"items"`
	NextPageToken string                     `json:"nextPageToken,omitempty"`
	SelfLink      string                     `json:"selfLink"`
}

// aggregatedGroups answers GET /compute/v1/projects/P/aggregated/instanceGroupManagers:
// the project's instance groups (its node pools', one per zone) that the
// filter takes, sorted by zone then name, maxResults at a time; every zone
// (compute: "Retrieves the list of managed instance groups and groups them
// by zone") is a scope of the answer, those without a group on the page
// with the NO_RESULTS_ON_PAGE warning. orderBy may be name, the default
// order (compute: "By default, results are returned in alphanumerical
// order based on the resource name"); creationTimestamp desc is refused.
func (s *Server) aggregatedGroups(req *sim.Request) *sim.Reply {
	project, q := req.HTTP.PathValue("project"), req.HTTP.URL.Query()
	match, rep := parseFilter(q.Get("filter"))
	if rep != nil {
		return rep
	}
	size, ok := groupPageSize(q.Get("maxResults"))
	if !ok {
		return computeInvalid("maxResults", q.Get("maxResults"), "Acceptable values are 0 to 500, inclusive.")
	}
	if o := q.Get("orderBy"); o != "" && o != "name" {
		return computeInvalid("orderBy", o, "kpool cloudsim sorts by name only.")
	}
	type entry struct {
		zone string
		g    instanceGroupManager
	}
	var all []entry
	zones := map[string]bool{}
	for r := range zonesOf {
		for _, z := range regionZones(r) {
			zones[z] = true
		}
	}
	for _, c := range s.clusters {
		if c.project != project {
			continue
		}
		for _, z := range regionZones(region(c.location)) {
			zones[z] = true
		}
		for _, p := range c.pools {
			for _, z := range p.np.Locations {
				if g := groupView(req, p, project, z); match(g.Name) {
					all = append(all, entry{z, g})
				}
			}
		}
	}
	key := func(e entry) string { return e.zone + "/" + e.g.Name }
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(key(a), key(b)) })
	page, next, err := sim.Page(all, key, q.Get("pageToken"), size)
	if err != nil {
		return computeInvalid("pageToken", q.Get("pageToken"), "The page token is not one this list gave.")
	}
	path := "projects/" + project + "/aggregated/instanceGroupManagers"
	out := groupAggregatedList{Kind: "compute#instanceGroupManagerAggregatedList", ID: path, Items: map[string]groupScopedList{},
		NextPageToken: next, SelfLink: req.BaseURL() + "/compute/v1/" + path}
	for _, e := range page {
		sl := out.Items["zones/"+e.zone]
		sl.InstanceGroupManagers = append(sl.InstanceGroupManagers, e.g)
		out.Items["zones/"+e.zone] = sl
	}
	for _, z := range slices.Sorted(maps.Keys(zones)) {
		if sc := "zones/" + z; len(out.Items[sc].InstanceGroupManagers) == 0 {
			out.Items[sc] = groupScopedList{Warning: &listWarning{Code: "NO_RESULTS_ON_PAGE",
				Message: fmt.Sprintf("There are no results for scope '%s' on this page.", sc), Data: []map[string]string{{"key": "scope", "value": sc}}}}
		}
	}
	return jsonReply(200, out)
}

// groupPageSize reads maxResults: 0 to 500, 0 (proto3's unset uint32) and
// none the default, 500.
func groupPageSize(v string) (int, bool) {
	if v == "" {
		return maxGroupResults, true
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0 || n > maxGroupResults:
		return 0, false
	case n == 0:
		return maxGroupResults, true
	}
	return n, true
}

// computeError is Compute Engine's error body, whose errors[] the Go
// client reads (googleapi: "Error 400: Invalid value for field 'filter':
// '…'. Invalid list filter expression., invalid", as
// googleapis/google-api-go-client#1019 and prometheus/prometheus#5499
// recorded it): {"error":{"code","message","errors":[{"message","domain","reason"}]}}.
type computeError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Errors  []computeErrorRow `json:"errors"`
}

type computeErrorRow struct {
	Message string `json:"message"`
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
}

// computeInvalid is Compute's 400 for a query field's value: "Invalid
// value for field 'F': 'V'. WHY", reason invalid.
func computeInvalid(field, value, why string) *sim.Reply {
	msg := fmt.Sprintf("Invalid value for field '%s': '%s'. %s", field, value, why)
	return jsonReply(400, struct {
		Error computeError `json:"error"`
	}{computeError{Code: 400, Message: msg, Errors: []computeErrorRow{{Message: msg, Domain: "global", Reason: "invalid"}}}})
}
