package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/service"
)

// logicalRow is a logical pool in the cluster page's section: its asked
// size as the CLI shows it.
type logicalRow struct {
	*kpool.LogicalPool
	Count string
}

// logicalSize is a logical pool's count, or its autoscaling bounds.
func logicalSize(s *kpool.LogicalPoolSpec) string {
	n := func(p *int) string {
		if p == nil {
			return "?"
		}
		return fmt.Sprint(*p)
	}
	if a := s.Autoscaling; a != nil && a.Enabled {
		return n(a.MinNodes) + "–" + n(a.MaxNodes)
	}
	return n(s.NodeCount)
}

// logicalRows lists a cluster's logical pools for its page.
func (h *Handler) logicalRows(ctx context.Context, clusterID string) ([]logicalRow, error) {
	lps, err := all(ctx, h.o.Service.LogicalPools, service.ListOptions{ClusterID: clusterID})
	if err != nil {
		return nil, err
	}
	rows := make([]logicalRow, len(lps))
	for i, lp := range lps {
		rows[i] = logicalRow{lp, logicalSize(&lp.Spec)}
	}
	return rows, nil
}

// logicalPool is a logical pool's page: its members, the offerings that
// ran out and the order in which it takes its offerings. Read-only.
func (h *Handler) logicalPool(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := h.o.Service.Cluster(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	lp, err := h.o.Service.FindLogicalPool(ctx, c.ID, r.PathValue("name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var order []string
	for _, a := range lp.Spec.Alternatives(h.o.Profiles, c) {
		if len(a.Offerings) == 0 {
			continue
		}
		o := a.Offerings[0]
		s := o.MachineType
		if o.Spot {
			s += " (spot)"
		}
		var zones []string
		for _, o := range a.Offerings {
			if o.Zone != "" {
				zones = append(zones, o.Zone)
			}
		}
		if len(zones) > 0 {
			s += " in zones " + strings.Join(zones, ", ")
		}
		order = append(order, s)
	}
	h.render(w, r, "logicalpool", map[string]any{"Cluster": c, "LogicalPool": lp, "Count": logicalSize(&lp.Spec), "Order": order,
		"Title": lp.Name})
}
