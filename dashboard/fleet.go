package dashboard

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// The fleet view's bounds: whatever the fleet's size, a render reads the
// visible clusters, the pool counters (a few rows per cluster) and at
// most a page of clusters' worth of pools.
const (
	// ClustersPerPage is how many clusters a fleet page shows.
	ClustersPerPage = 25
	// attentionShown is how many pools needing attention a cluster names;
	// its page lists the rest.
	attentionShown = 5
	// matchesShown is how many pools a pool filter names per cluster.
	matchesShown = 20
	// SearchBudget is how many pools a page's label or name search reads
	// at most, the only filters the counters cannot answer.
	SearchBudget = 5000
)

// fleetCluster is a cluster in the fleet view.
type fleetCluster struct {
	*kpool.Cluster
	Provider  string
	Counts    []phaseCount
	Pools     int               // its pools, whatever the filter
	Attention []*kpool.NodePool // Failed or Degraded, at most attentionShown
	// MoreAttention is how many more need attention than are named.
	MoreAttention int
	Matches       []*kpool.NodePool // the pools a pool filter selects, at most matchesShown
	MoreMatches   int
	matched       int // pools the filter selects
}

type phaseCount struct {
	Phase kpool.Phase
	N     int
}

type providerGroup struct {
	Name     string
	Type     kpool.PlatformType
	N        int // its clusters the filter selects, on every page
	Clusters []*fleetCluster
}

// filter is the fleet view's query.
type filter struct {
	Provider, Cluster, Phase, Label, Q string
	Page                               int // from 1
}

func filterOf(q url.Values) filter {
	f := filter{Provider: q.Get("provider"), Cluster: q.Get("cluster"), Phase: q.Get("phase"), Label: q.Get("label"), Q: q.Get("q")}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	for _, ph := range kpool.Phases {
		if strings.EqualFold(f.Phase, string(ph)) {
			f.Phase = string(ph)
		}
	}
	return f
}

func (f filter) poolFilter() bool { return f.Phase != "" || f.search() }

// search reports whether f filters pools on what the counters do not
// count (a label, a name): those pools are read, within SearchBudget.
func (f filter) search() bool { return f.Label != "" || f.Q != "" }

func (f filter) matchPool(p *kpool.NodePool) bool {
	if f.Phase != "" && !strings.EqualFold(string(p.Status.Phase), f.Phase) {
		return false
	}
	if f.Q != "" && !strings.Contains(strings.ToLower(p.Name), strings.ToLower(f.Q)) {
		return false
	}
	if f.Label != "" {
		k, v, hasV := strings.Cut(f.Label, "=")
		got, ok := p.Spec.Labels[strings.TrimSpace(k)]
		if !ok || hasV && got != strings.TrimSpace(v) {
			return false
		}
	}
	return true
}

func (f filter) matchCluster(c *kpool.Cluster, counts map[kpool.Phase]int) bool {
	if f.Provider != "" && string(c.Spec.Platform.Type) != f.Provider {
		return false
	}
	if f.Cluster != "" && !strings.Contains(strings.ToLower(c.Name), strings.ToLower(f.Cluster)) && c.ID != f.Cluster {
		return false
	}
	return f.Phase == "" || counts[kpool.Phase(f.Phase)] > 0
}

// fleetView is what the fleet page shows.
type fleetView struct {
	Groups []*providerGroup
	Totals []phaseCount
	// Clusters, Pools and Attention are the filter's totals: over every
	// page from the counters, or over this page's clusters for a search.
	Clusters, Pools, Attention int
	// Unreachable is how many of the selected clusters kpool cannot reach.
	Unreachable     int
	First, Last, Of int    // this page's clusters among those selected
	Prev, Next      string // the other pages' addresses
	Searched        int    // pools a search read
	Stopped         bool   // the search reached SearchBudget
}

// fleet is the fleet view: the visible clusters by provider, a page at a
// time, with their pools counted per phase from the store's counters and
// those needing attention (Failed, Degraded) named, read through limited
// queries. It never reads every pool: a label or name search reads the
// pools of this page's clusters, at most SearchBudget.
func (h *Handler) fleet(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f := filterOf(r.URL.Query())
	clusters, err := all(ctx, h.o.Service.Clusters, service.ListOptions{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	counts, err := h.o.Service.NodePoolCounts(ctx, "")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	byCluster := map[string]map[kpool.Phase]int{}
	for _, c := range counts {
		if byCluster[c.ClusterID] == nil {
			byCluster[c.ClusterID] = map[kpool.Phase]int{}
		}
		byCluster[c.ClusterID][c.Phase] += c.N
	}
	sel := h.selectClusters(clusters, byCluster, f)
	v := &fleetView{Of: len(sel), Unreachable: unreachable(sel)}
	f.Page = min(f.Page, max(1, (len(sel)+ClustersPerPage-1)/ClustersPerPage)) // past the end: the last page
	v.First = min((f.Page-1)*ClustersPerPage, len(sel))
	v.Last = min(v.First+ClustersPerPage, len(sel))
	if v.First > 0 {
		v.Prev = pageURL(r.URL.Query(), f.Page-1)
	}
	if v.Last < len(sel) {
		v.Next = pageURL(r.URL.Query(), f.Page+1)
	}
	if err := h.fillFleet(ctx, v, sel, byCluster, f); err != nil {
		h.fail(w, r, err)
		return
	}
	var types []string
	for _, p := range h.o.Profiles.Profiles() {
		types = append(types, string(p.Type()))
	}
	h.render(w, r, "fleet", map[string]any{"View": v, "Groups": v.Groups, "Totals": v.Totals, "Pools": v.Pools, "Attention": v.Attention,
		"Unreachable": v.Unreachable, "Clusters": v.Clusters, "Filter": f, "Types": types, "Phases": phases, "Title": "Fleet",
		"MayRegister": mayCreateClusters(identity(r))})
}

// selectClusters returns the clusters f selects, in the order the view
// shows them: by provider (the registry's order), then by name.
func (h *Handler) selectClusters(clusters []*kpool.Cluster, counts map[string]map[kpool.Phase]int, f filter) []*kpool.Cluster {
	order := map[kpool.PlatformType]int{}
	for i, p := range h.o.Profiles.Profiles() {
		order[p.Type()] = i
	}
	var sel []*kpool.Cluster
	for _, c := range clusters {
		if f.matchCluster(c, counts[c.ID]) {
			sel = append(sel, c)
		}
	}
	slices.SortFunc(sel, func(a, b *kpool.Cluster) int {
		return cmp.Or(cmp.Compare(order[a.Spec.Platform.Type], order[b.Spec.Platform.Type]), strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID))
	})
	return sel
}

// fillFleet fills v with the page's clusters, grouped by provider, and the
// totals: from the counters over every selected cluster, or for a search
// from the pools it read.
func (h *Handler) fillFleet(ctx context.Context, v *fleetView, sel []*kpool.Cluster, counts map[string]map[kpool.Phase]int, f filter) error {
	total := map[kpool.Phase]int{}
	groups := map[kpool.PlatformType]*providerGroup{}
	group := func(c *kpool.Cluster) *providerGroup {
		t := c.Spec.Platform.Type
		if groups[t] == nil {
			name := h.o.Profiles.Profile(t).Capabilities().Name
			groups[t] = &providerGroup{Name: cmp.Or(name, string(t)), Type: t}
			v.Groups = append(v.Groups, groups[t])
		}
		return groups[t]
	}
	if !f.search() {
		for _, c := range sel {
			group(c).N++
			for ph, n := range counts[c.ID] {
				if f.Phase == "" || string(ph) == f.Phase {
					total[ph] += n
				}
			}
		}
		v.Clusters = len(sel)
	}
	budget := SearchBudget
	for _, c := range sel[v.First:v.Last] {
		fc := &fleetCluster{Cluster: c, Provider: h.o.Profiles.Profile(c.Spec.Platform.Type).Capabilities().Name}
		for _, n := range counts[c.ID] {
			fc.Pools += n
		}
		var err error
		if f.search() {
			err = h.searchCluster(ctx, fc, f, &budget, total)
		} else {
			err = h.countCluster(ctx, fc, counts[c.ID], f)
		}
		if err != nil {
			return err
		}
		if f.search() && fc.matched == 0 {
			continue
		}
		if f.search() {
			group(c).N++
			v.Clusters++
		}
		group(c).Clusters = append(group(c).Clusters, fc)
	}
	v.Searched, v.Stopped = SearchBudget-budget, f.search() && budget <= 0
	v.Groups = slices.DeleteFunc(v.Groups, func(g *providerGroup) bool { return len(g.Clusters) == 0 })
	for _, ph := range phases {
		if total[ph] > 0 {
			v.Totals = append(v.Totals, phaseCount{ph, total[ph]})
			v.Pools += total[ph]
		}
	}
	v.Attention = total[kpool.PhaseFailed] + total[kpool.PhaseDegraded]
	return nil
}

// countCluster fills a cluster's counts from the counters, and names the
// pools needing attention (or those of the phase filtered on) through
// queries of a few rows each.
func (h *Handler) countCluster(ctx context.Context, fc *fleetCluster, counts map[kpool.Phase]int, f filter) error {
	for _, ph := range phases {
		if n := counts[ph]; n > 0 && (f.Phase == "" || string(ph) == f.Phase) {
			fc.Counts = append(fc.Counts, phaseCount{ph, n})
			fc.matched += n
		}
	}
	if f.Phase != "" {
		ps, err := h.poolsIn(ctx, fc.ID, kpool.Phase(f.Phase), matchesShown)
		if err != nil {
			return err
		}
		fc.Matches, fc.MoreMatches = ps, fc.matched-len(ps)
	}
	for _, ph := range []kpool.Phase{kpool.PhaseFailed, kpool.PhaseDegraded} {
		n := counts[ph]
		if n == 0 || f.Phase != "" && string(ph) != f.Phase {
			continue
		}
		if room := attentionShown - len(fc.Attention); room > 0 {
			ps, err := h.poolsIn(ctx, fc.ID, ph, room)
			if err != nil {
				return err
			}
			fc.Attention = append(fc.Attention, ps...)
			n -= len(ps)
		}
		fc.MoreAttention += n
	}
	return nil
}

// poolsIn returns up to limit pools of a cluster in a phase.
func (h *Handler) poolsIn(ctx context.Context, clusterID string, ph kpool.Phase, limit int) ([]*kpool.NodePool, error) {
	l, err := h.o.Service.NodePools(ctx, service.ListOptions{ClusterID: clusterID, Phase: ph, Limit: limit})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// searchCluster reads a cluster's pools (of the phase filtered on), while
// budget lasts, and keeps those the label and name filters select.
func (h *Handler) searchCluster(ctx context.Context, fc *fleetCluster, f filter, budget *int, total map[kpool.Phase]int) error {
	counts := map[kpool.Phase]int{}
	o := service.ListOptions{ClusterID: fc.ID, Phase: kpool.Phase(f.Phase)}
	for *budget > 0 {
		o.Limit = min(kpool.MaxLimit, *budget)
		l, err := h.o.Service.NodePools(ctx, o)
		if err != nil {
			return err
		}
		*budget -= len(l.Items)
		for _, p := range l.Items {
			if !f.matchPool(p) {
				continue
			}
			counts[p.Status.Phase]++
			total[p.Status.Phase]++
			fc.matched++
			if attention(p) && len(fc.Attention) < attentionShown {
				fc.Attention = append(fc.Attention, p)
			} else if attention(p) {
				fc.MoreAttention++
			}
			if len(fc.Matches) < matchesShown {
				fc.Matches = append(fc.Matches, p)
			} else {
				fc.MoreMatches++
			}
		}
		if l.Next == "" {
			break
		}
		o.After = l.Next
	}
	for _, ph := range phases {
		if counts[ph] > 0 {
			fc.Counts = append(fc.Counts, phaseCount{ph, counts[ph]})
		}
	}
	return nil
}

// pageURL is the fleet view's address for page n with the same filters.
func pageURL(q url.Values, n int) string {
	q = maps.Clone(q)
	q.Del("fragment")
	q.Del("page")
	if n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}
