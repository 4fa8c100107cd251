package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// labelPools are the pools testLabelSelector selects among, by name.
var labelPools = []struct {
	name   string
	labels map[string]string
}{
	{"web-gold", map[string]string{"tier": "web", "example.com/tier": "gold"}},
	{"db", map[string]string{"tier": "db", "version": "1"}},
	{"bare", nil},
	{"web-gpu", map[string]string{"tier": "web", "gpu": "true"}},
	{"silver", map[string]string{"example.com/tier": "silver", "a.b": "x"}},
	{"web-plain", map[string]string{"tier": "web"}},
}

// testLabelSelector: lists select pools by spec.labels in the store with
// kubectl's semantics, totals and pages (offset and keyset) count only what
// the selector picks, and keys and values are data, never SQL.
func testLabelSelector(t *testing.T, s *service.Service) {
	fixed := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return fixed } // order rests on the ids
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "labelled")
	NewPool(t, s, NewCluster(t, s, Bob, "bobs"), "web-bob") // not alice's: never listed
	byName := map[string]map[string]string{}
	for _, lp := range labelPools {
		newLabelledPool(t, s, c, lp.name, lp.labels)
		byName[lp.name] = lp.labels
	}
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{"tier=web", []string{"web-gold", "web-gpu", "web-plain"}},
		{"tier==web", []string{"web-gold", "web-gpu", "web-plain"}},
		{"tier!=web", []string{"bare", "db", "silver"}},
		{"tier in (db,web)", []string{"db", "web-gold", "web-gpu", "web-plain"}},
		{"tier notin (db,web)", []string{"bare", "silver"}},
		{"gpu", []string{"web-gpu"}},
		{"gpu=true", []string{"web-gpu"}},
		{"version in (1,2)", []string{"db"}}, // values that look like JSON numbers are strings
		{"version!=1", []string{"bare", "silver", "web-gold", "web-gpu", "web-plain"}},
		{"!tier", []string{"bare", "silver"}},
		{"example.com/tier=gold", []string{"web-gold"}},
		{"example.com/tier", []string{"silver", "web-gold"}},
		{"example.com/tier notin (gold)", []string{"bare", "db", "silver", "web-gpu", "web-plain"}},
		{"a.b=x", []string{"silver"}},
		{"tier=web,!gpu", []string{"web-gold", "web-plain"}},
		{"tier=web,example.com/tier!=gold", []string{"web-gpu", "web-plain"}},
		{"tier=nothing", nil},
		{"", []string{"bare", "db", "silver", "web-gold", "web-gpu", "web-plain"}},
	} {
		sel, err := kpool.ParseSelector("label_selector", tc.sel)
		if err != nil {
			t.Fatalf("%q: %v", tc.sel, err)
		}
		var model []string // what Selector.Matches, the Go semantics, picks
		for name, l := range byName {
			if sel.Matches(l) {
				model = append(model, name)
			}
		}
		slices.Sort(model)
		got := selectNames(t, s, service.ListOptions{ClusterID: c.ID, Labels: sel})
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(model) != fmt.Sprint(tc.want) {
			t.Errorf("%q: store picks %v, Matches %v, want %v", tc.sel, got, model, tc.want)
		}
	}
	checkLabelPaging(t, s, c)
	// Keys and values the parser would refuse, handed to the store as they
	// are: they match nothing and break nothing.
	evil := `x'); DELETE FROM nodepools; --`
	for _, sel := range []kpool.Selector{
		{{Key: evil, Op: kpool.OpEquals, Values: []string{"' OR '1'='1"}}},
		{{Key: `$.tier`, Op: kpool.OpExists}},
		{{Key: `tier"`, Op: kpool.OpIn, Values: []string{`web"`}}},
	} {
		if l := ok(s.NodePools(ctx, service.ListOptions{Labels: sel}))(t); l.Total != 0 || len(l.Items) != 0 {
			t.Errorf("%v: picked %d pools, want none", sel, l.Total)
		}
	}
	notEvil := kpool.Selector{{Key: evil, Op: kpool.OpNotEquals, Values: []string{"' OR '1'='1"}}}
	if l := ok(s.NodePools(ctx, service.ListOptions{ClusterID: c.ID, Labels: notEvil}))(t); l.Total != len(labelPools) {
		t.Errorf("!= on an absent key picked %d pools, want all %d", l.Total, len(labelPools))
	}
}

// checkLabelPaging: pages of one pool, by offset and by keyset, visit each
// selected pool once with the selector's total on every page.
func checkLabelPaging(t *testing.T, s *service.Service, c *kpool.Cluster) {
	t.Helper()
	sel, _ := kpool.ParseSelector("label_selector", "tier in (web,db)")
	want := selectNames(t, s, service.ListOptions{ClusterID: c.ID, Labels: sel})
	byOffset, byCursor := []string{}, []string{}
	for off, after := 0, ""; ; off++ {
		po := ok(s.NodePools(Ctx(Alice), service.ListOptions{Labels: sel, Limit: 1, Offset: off}))(t)
		pc := ok(s.NodePools(Ctx(Alice), service.ListOptions{Labels: sel, Limit: 1, After: after}))(t)
		if po.Total != 4 || pc.Total != 4 {
			t.Fatalf("page %d: totals %d (offset) and %d (after), want 4", off, po.Total, pc.Total)
		}
		for _, p := range po.Items {
			byOffset = append(byOffset, p.Name)
		}
		for _, p := range pc.Items {
			byCursor = append(byCursor, p.Name)
		}
		if pc.Next == "" || off > len(labelPools) {
			break
		}
		after = pc.Next
	}
	slices.Sort(byOffset)
	slices.Sort(byCursor)
	if fmt.Sprint(byOffset) != fmt.Sprint(want) || fmt.Sprint(byCursor) != fmt.Sprint(want) {
		t.Fatalf("paging under a selector:\n offset %v\n cursor %v\n want   %v", byOffset, byCursor, want)
	}
}

// selectNames lists what o selects, as sorted names, checking that the
// total is the number of items.
func selectNames(t *testing.T, s *service.Service, o service.ListOptions) []string {
	t.Helper()
	l := ok(s.NodePools(Ctx(Alice), o))(t)
	var names []string
	for _, p := range l.Items {
		names = append(names, p.Name)
	}
	if l.Total != len(names) {
		t.Fatalf("%v: total %d, %d items", o.Labels, l.Total, len(names))
	}
	slices.Sort(names)
	return names
}

// newLabelledPool creates a GCP pool with spec.labels in cluster c.
func newLabelledPool(t *testing.T, s *service.Service, c *kpool.Cluster, name string, labels map[string]string) {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal([]byte(GCPPool), &spec); err != nil {
		t.Fatal(err)
	}
	if labels != nil {
		spec["labels"] = labels
	}
	raw, _ := json.Marshal(spec)
	ok(s.CreateNodePool(Ctx(c.CreatedBy), service.NodePoolCreate{Name: name, ClusterID: c.ID, Spec: raw}))(t)
}

// testLogicalLabelSelector: logical pools are selected by their template's
// labels, with totals and pages of what the selector picks.
func testLogicalLabelSelector(t *testing.T, s *service.Service) {
	ctx := Ctx(Alice)
	c := NewCluster(t, s, Alice, "logical")
	for name, labels := range map[string]string{"web": `{"tier":"web"}`, "batch": `{"tier":"batch","example.com/spot":"yes"}`, "plain": `{}`} {
		spec := `{"nodeCount":3,"template":{"labels":` + labels + `,"platform":{"gcp":{"machineType":"n1-standard-4"}},"zones":["1","2","3"]}}`
		ok(s.CreateLogicalPool(ctx, service.LogicalPoolCreate{ClusterID: c.ID, Name: name, Spec: json.RawMessage(spec)}))(t)
	}
	for _, tc := range []struct{ sel, want string }{
		{"tier=web", "[web]"},
		{"tier!=web", "[batch plain]"},
		{"example.com/spot", "[batch]"},
		{"tier notin (web,batch)", "[plain]"},
		{"", "[batch plain web]"},
	} {
		sel, err := kpool.ParseSelector("label_selector", tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		l := ok(s.LogicalPools(ctx, service.ListOptions{ClusterID: c.ID, Labels: sel}))(t)
		var names []string
		for _, lp := range l.Items {
			names = append(names, lp.Name)
		}
		slices.Sort(names)
		if fmt.Sprint(names) != tc.want || l.Total != len(names) {
			t.Errorf("%q: %v (total %d), want %s", tc.sel, names, l.Total, tc.want)
		}
	}
	sel, _ := kpool.ParseSelector("label_selector", "tier")
	first := ok(s.LogicalPools(ctx, service.ListOptions{ClusterID: c.ID, Labels: sel, Limit: 1}))(t)
	second := ok(s.LogicalPools(ctx, service.ListOptions{ClusterID: c.ID, Labels: sel, Limit: 1, After: first.Next}))(t)
	if first.Total != 2 || second.Total != 2 || len(first.Items) != 1 || len(second.Items) != 1 || second.Next != "" ||
		first.Items[0].ID == second.Items[0].ID {
		t.Fatalf("pages of logical pools under a selector: %+v then %+v", first, second)
	}
}
