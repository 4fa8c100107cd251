package dashboard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// maxNodeRows is how many nodes a page lists; past it, the page says how
// many more there are (kpool cluster nodes lists them all).
const maxNodeRows = 500

// nodeList is the Kubernetes nodes a page shows, or why it shows none.
type nodeList struct {
	Items []kpool.Node
	More  int
	// Err says why the nodes could not be read (this kpool reads no
	// cluster's API, or the cluster's API did not answer); the page
	// shows it instead of failing.
	Err string
}

// nodes is a page's node list from a service answer: a read that failed
// is said on the page, its cause (which may name the cluster's API
// server) logged only when it is not kpool's own error.
func (h *Handler) nodes(ns []kpool.Node, err error) nodeList {
	if err != nil {
		msg := "The nodes could not be read."
		var e *kpool.Error
		if errors.As(err, &e) {
			msg = e.Message
		} else {
			h.o.Log.Warn("reading nodes", "err", err)
		}
		return nodeList{Err: msg}
	}
	l := nodeList{Items: ns}
	if len(ns) > maxNodeRows {
		l.Items, l.More = ns[:maxNodeRows], len(ns)-maxNodeRows
	}
	return l
}

// kubeCounts is status.nodes for a page: "2/3 Ready in Kubernetes (1
// cordoned)", "" when no controller has counted the nodes.
func kubeCounts(k *kpool.NodeCounts) string {
	if k == nil {
		return ""
	}
	s := fmt.Sprintf("%d/%d Ready in Kubernetes", k.Ready, k.Total)
	var more []string
	if k.Cordoned > 0 {
		more = append(more, fmt.Sprintf("%d cordoned", k.Cordoned))
	}
	if k.Unlabelled > 0 {
		more = append(more, fmt.Sprintf("%d missing placement labels", k.Unlabelled))
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	return s
}
