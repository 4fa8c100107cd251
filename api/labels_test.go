package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// TestLabelSelectorList: GET /nodepools?label_selector= lists the pools
// whose spec.labels match, with the total and pages of what it selects; the
// Go client sends ListOptions.Labels; a bad selector is a 400 naming
// label_selector with the reason.
func TestLabelSelectorList(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "labelled", gcpCluster)
		for name, labels := range map[string]string{
			"web-1": `{"tier":"web","example.com/env":"prod"}`,
			"web-2": `{"tier":"web"}`,
			"web-3": `{"tier":"web","example.com/env":"dev"}`,
			"db":    `{"tier":"db","example.com/env":"prod"}`,
			"bare":  `{}`,
		} {
			spec := strings.Replace(gcpPool, `"nodeCount":3`, `"nodeCount":3,"labels":`+labels, 1)
			want(t, a.as(user, "POST", "/api/v1/nodepools", fmt.Sprintf(`{"name":%q,"cluster_id":%q,"spec":%s}`, name, c.ID, spec)), http.StatusCreated)
		}
		list := func(path, sel string, extra string) NodePoolList {
			t.Helper()
			r := a.as(user, "GET", path+"?label_selector="+url.QueryEscape(sel)+extra, "")
			want(t, r, http.StatusOK)
			var l NodePoolList
			r.json(t, &l)
			return l
		}
		for _, tc := range []struct{ sel, want string }{
			{"tier=web", "web-1 web-2 web-3"},
			{"tier=web,example.com/env!=prod", "web-2 web-3"},
			{"example.com/env in (prod)", "db web-1"},
			{"example.com/env notin (prod,dev)", "bare web-2"},
			{"!tier", "bare"},
			{"", "bare db web-1 web-2 web-3"},
		} {
			for _, path := range []string{"/api/v1/nodepools", "/api/v1/clusters/" + c.ID + "/nodepools"} {
				l := list(path, tc.sel, "")
				if got := poolNames(l); got != tc.want || l.Total != len(l.NodePools) {
					t.Errorf("%s %q: %q (total %d), want %q", path, tc.sel, got, l.Total, tc.want)
				}
			}
		}
		// Pages of one: every page has the selector's total, and the
		// keyset and offset pages visit the three web pools.
		var byAfter, byOffset []string
		for i, next := 0, ""; i < 5; i++ {
			extra := "&limit=1"
			if next != "" {
				extra += "&after=" + next
			}
			la := list("/api/v1/nodepools", "tier=web", extra)
			lo := list("/api/v1/nodepools", "tier=web", fmt.Sprintf("&limit=1&offset=%d", i))
			if la.Total != 3 || lo.Total != 3 {
				t.Fatalf("page %d: total %d and %d, want 3", i, la.Total, lo.Total)
			}
			byAfter, byOffset = append(byAfter, poolNames(la)), append(byOffset, poolNames(lo))
			if next = la.Next; next == "" {
				break
			}
		}
		slices.Sort(byAfter)
		slices.Sort(byOffset)
		if got := strings.Join(byAfter, " "); got != "web-1 web-2 web-3" || strings.Join(byOffset[:3], " ") != got {
			t.Fatalf("pages: after %v, offset %v", byAfter, byOffset)
		}
		// The Go client sends the selector.
		sel, err := kpool.ParseSelector("label_selector", "example.com/env=prod")
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewClient(a.srv.URL, user).NodePools(context.Background(), service.ListOptions{Labels: sel})
		if err != nil || poolNames(*l) != "db web-1" || l.Total != 2 {
			t.Fatalf("client: %+v, %v", l, err)
		}
		for _, bad := range []string{"tier in web", "tier=we b", "tier>1", "a/b/c=x"} {
			e := wantError(t, a.as(user, "GET", "/api/v1/nodepools?label_selector="+url.QueryEscape(bad), ""), http.StatusBadRequest, kpool.CodeValidation, "")
			if len(e.Fields) != 1 || e.Fields[0].Field != "label_selector" || !strings.Contains(e.Fields[0].Reason, "is not a label selector") && !strings.Contains(e.Fields[0].Reason, "not supported") {
				t.Errorf("%q: %+v, want a fault naming label_selector with the reason", bad, e)
			}
		}
		many := strings.Repeat("a=b,", kpool.MaxLabels) + "a=b"
		wantError(t, a.as(user, "GET", "/api/v1/nodepools?label_selector="+url.QueryEscape(many), ""), http.StatusBadRequest, kpool.CodeValidation, "label_selector")
		// Clusters are not selected by labels: the parameter is unknown there.
		wantError(t, a.as(user, "GET", "/api/v1/clusters?label_selector=a", ""), http.StatusBadRequest, kpool.CodeValidation, "label_selector")
	})
}

// poolNames is a page's pool names, sorted and space-separated.
func poolNames(l NodePoolList) string {
	var names []string
	for _, p := range l.NodePools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// TestLogicalPoolsLabelSelector: GET /clusters/{id}/logicalpools takes
// label_selector on the template's labels, and the Go client sends it.
func TestLogicalPoolsLabelSelector(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *testAPI) {
		c := a.cluster(user, "logical", gcpCluster)
		base := "/api/v1/clusters/" + c.ID + "/logicalpools"
		labelled := strings.Replace(lpSpec, `"template":{`, `"template":{"labels":{"tier":"web"},`, 1)
		want(t, a.as(user, "POST", base, `{"name":"web","spec":`+labelled+`}`), http.StatusCreated)
		want(t, a.as(user, "POST", base, `{"name":"plain","spec":`+lpSpec+`}`), http.StatusCreated)
		for sel, wantName := range map[string]string{"tier=web": "web", "!tier": "plain"} {
			parsed, err := kpool.ParseSelector("label_selector", sel)
			if err != nil {
				t.Fatal(err)
			}
			l, err := NewClient(a.srv.URL, user).LogicalPools(context.Background(), c.ID, service.ListOptions{Labels: parsed})
			if err != nil || l.Total != 1 || len(l.LogicalPools) != 1 || l.LogicalPools[0].Name != wantName {
				t.Errorf("%q: %+v, %v; want %s alone", sel, l, err, wantName)
			}
		}
		e := wantError(t, a.as(user, "GET", base+"?label_selector="+url.QueryEscape("tier in web"), ""), http.StatusBadRequest, kpool.CodeValidation, "")
		if len(e.Fields) != 1 || e.Fields[0].Field != "label_selector" {
			t.Errorf("a bad selector: %+v, want a fault naming label_selector", e)
		}
	})
}
