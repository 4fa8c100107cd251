package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/audit"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
)

// phases in the order the fleet view counts them.
var phases = []kpool.Phase{kpool.PhaseReady, kpool.PhaseProvisioning, kpool.PhaseUpdating, kpool.PhasePending,
	kpool.PhaseDegraded, kpool.PhaseFailed, kpool.PhaseDeleting}

// attention reports whether a pool needs a person: failed or degraded.
func attention(p *kpool.NodePool) bool {
	return p.Status.Phase == kpool.PhaseFailed || p.Status.Phase == kpool.PhaseDegraded
}

var funcs = template.FuncMap{
	"attention": attention,
	"reach":     reachOf,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"join":  strings.Join,
	"age":   func(t time.Time) string { return duration.HumanDuration(max(time.Since(t), 0)) },
	"inc":   func(n int) int { return n + 1 },
	"lower": func(s any) string { return strings.ToLower(fmt.Sprint(s)) },
	"json": func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	},
	// rollbackable: the replacement may still be rolled back, and no one
	// has asked yet (service.RollbackNodePool's rules).
	"rollbackable": func(r *kpool.Replacement) bool {
		return r.Active() && r.Step != kpool.StepRetiring && r.Step != kpool.StepRollingBack && r.RollbackRequestedAt == nil
	},
	"kv": func(m map[string]string) string {
		var out []string
		for _, k := range kpool.SortedKeys(m) {
			out = append(out, k+"="+m[k])
		}
		return strings.Join(out, ", ")
	},
}

// all pages through a list.
func all[T any](ctx context.Context, list func(context.Context, service.ListOptions) (*service.List[T], error), o service.ListOptions) ([]T, error) {
	o.Limit = kpool.MaxLimit
	var out []T
	for {
		page, err := list(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out, nil
		}
		o.After = page.Next
	}
}

// poolRow is a pool in the cluster view's table.
type poolRow struct {
	*kpool.NodePool
	MachineType string
	Zones       []string
	Ready       string // ready/desired, "?" when not known yet
	// Kube is what the cluster's Kubernetes API says of the pool's nodes
	// (status.nodes), "" until a controller has counted them.
	Kube       string
	ByZone     string // per zone, as the controller last counted
	Bounds     string
	Conditions []kpool.Condition // those not as they are on a healthy pool
	Drift      string
	LastError  string
}

// healthy is each condition's status on a pool that needs nothing.
var healthy = map[string]string{kpool.ConditionReady: kpool.ConditionTrue, kpool.ConditionProgressing: kpool.ConditionFalse,
	kpool.ConditionDegraded: kpool.ConditionFalse, kpool.ConditionDrifted: kpool.ConditionFalse, kpool.ConditionSupported: kpool.ConditionTrue,
	kpool.ConditionController: kpool.ConditionTrue, kpool.ConditionNodesCurrent: kpool.ConditionTrue}

func (h *Handler) row(ctx context.Context, c *kpool.Cluster, p *kpool.NodePool, withReports bool) poolRow {
	prof := h.o.Profiles.Profile(c.Spec.Platform.Type)
	zones, _, _ := provider.PoolZones(prof, c, &p.Spec)
	row := poolRow{NodePool: p, MachineType: prof.Block(c, &p.Spec).MachineType, Zones: zones, Ready: "?"}
	desired := p.Spec.Count()
	if a := p.Spec.Autoscaling; a.On() && a.MinNodes != nil && a.MaxNodes != nil {
		row.Bounds = fmt.Sprintf("%d–%d", *a.MinNodes, *a.MaxNodes)
	}
	for _, cond := range p.Status.Conditions {
		if want, ok := healthy[cond.Type]; ok && cond.Status == want {
			continue
		}
		row.Conditions = append(row.Conditions, cond)
		if cond.Type == kpool.ConditionDrifted && cond.Status == kpool.ConditionTrue {
			row.Drift = cond.Message
		}
	}
	if p.Status.Phase == kpool.PhaseFailed || p.Status.Phase == kpool.PhaseDegraded {
		row.LastError = p.Status.Message
	}
	row.Kube = kubeCounts(p.Status.Nodes)
	if !withReports {
		return row
	}
	doc, err := h.o.Service.NodePoolStatus(ctx, p.ID)
	if err != nil {
		return row
	}
	for _, cs := range doc.ControllerStatus {
		m := cs.Meta()
		if m.DesiredNodes != nil {
			desired = *m.DesiredNodes
		}
		if m.ActiveNodes != nil {
			row.Ready = fmt.Sprintf("%d/%d", *m.ActiveNodes, desired)
		}
		var z []string
		for _, k := range kpool.SortedKeys(m.NodesByZone) {
			z = append(z, fmt.Sprintf("%s: %d", k, m.NodesByZone[k]))
		}
		row.ByZone = strings.Join(z, ", ")
		if m.LastError != "" && row.LastError == "" {
			row.LastError = m.LastError
		}
	}
	return row
}

// capability is one field of the cluster's capability summary.
type capability struct {
	Field  provider.Field
	Class  kpool.UpdateClass
	Reason string
}

func (h *Handler) cluster(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := h.o.Service.Cluster(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	pools, err := all(ctx, h.o.Service.NodePools, service.ListOptions{ClusterID: c.ID})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Members of a logical pool sit together.
	slices.SortStableFunc(pools, func(a, b *kpool.NodePool) int { return strings.Compare(a.LogicalPool(), b.LogicalPool()) })
	rows := make([]poolRow, len(pools))
	for i, p := range pools {
		rows[i] = h.row(ctx, c, p, true)
	}
	caps := h.o.Profiles.Profile(c.Spec.Platform.Type).Capabilities()
	var table []capability
	for _, f := range provider.Fields {
		if u, ok := caps.Updates[f]; ok {
			table = append(table, capability{f, u.Class, u.Reason})
		}
	}
	facts, err := h.o.Service.ClusterFacts(ctx, c.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The cluster's own events: its writes, and why it became
	// unreachable and reachable again.
	events, err := h.o.Service.Events(ctx, audit.Query{ClusterID: c.ID, Type: "cluster.", Limit: 50})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	logical, err := h.logicalRows(ctx, c.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	nodes := h.nodes(h.o.Service.ClusterNodes(ctx, c.ID))
	h.render(w, r, "cluster", map[string]any{"Cluster": c, "Rows": rows, "Caps": caps, "Table": table, "Title": c.Name,
		"Facts": facts, "FactsStale": facts != nil && facts.Age(time.Now()) > provider.FactsMaxAge, "Events": events.Items, "Nodes": nodes,
		"LogicalPools": logical})
}

// point is one node count in a pool's history.
type point struct {
	At              time.Time
	Active, Desired int
}

var nodesRE = regexp.MustCompile(`; nodes (\d+)/(\d+)$`)

func (h *Handler) pool(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	doc, err := h.o.Service.NodePoolStatus(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.o.Service.NodePool(ctx, doc.NodePoolID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.o.Service.Cluster(ctx, p.ClusterID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	events, err := h.o.Service.Events(ctx, audit.Query{NodePoolID: p.ID, Limit: kpool.MaxLimit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The node-count history, oldest first, from the controllers' reports.
	var history []point
	for i := len(events.Items) - 1; i >= 0; i-- {
		e := events.Items[i]
		if m := nodesRE.FindStringSubmatch(e.Detail); m != nil {
			a, _ := strconv.Atoi(m[1])
			d, _ := strconv.Atoi(m[2])
			history = append(history, point{e.CreatedAt, a, d})
		}
	}
	spec, _ := json.MarshalIndent(p.Spec, "", "  ")
	prof := h.o.Profiles.Profile(c.Spec.Platform.Type)
	nodes := h.nodes(h.o.Service.PoolNodes(ctx, c.ID, p.ID))
	h.render(w, r, "pool", map[string]any{"Pool": p, "Cluster": c, "Row": h.row(ctx, c, p, true), "Doc": doc,
		"Events": events.Items, "Chart": chart(history, time.Now()), "Spec": string(spec), "Caps": prof.Capabilities(), "Title": p.Name, "Nodes": nodes,
		"Surge": p.Spec.UpdateStrategy.Surge()})
}

func (h *Handler) newPool(w http.ResponseWriter, r *http.Request) {
	c, err := h.o.Service.Cluster(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	prof := h.o.Profiles.Profile(c.Spec.Platform.Type)
	caps := prof.Capabilities()
	cli := prof.CLI()
	facts, err := h.o.Service.ClusterFacts(r.Context(), c.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, "new", map[string]any{"Cluster": c, "Caps": caps, "CLI": cli, "Zoned": caps.Zones != provider.ZonesNone,
		"Title": "New pool in " + c.Name, "Facts": facts})
}

func (h *Handler) place(w http.ResponseWriter, r *http.Request) {
	c, err := h.o.Service.Cluster(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	pools, err := all(r.Context(), h.o.Service.NodePools, service.ListOptions{ClusterID: c.ID})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	h.render(w, r, "place", map[string]any{"Cluster": c, "PoolNames": names, "Title": "Place apps on " + c.Name})
}
