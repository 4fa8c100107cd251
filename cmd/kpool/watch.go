package main

import (
	"errors"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// watchPools prints a row for each pool the server's live feed says
// changed (one of ids, or any pool when ids is nil; in cluster when it is
// set), until the command's context ends. A pool that is gone prints as
// DELETED; watching one pool ends there.
//
// snapshot prints what is there once the stream is open, so that no change
// between it and the first event is missed.
func (f *clientFlags) watchPools(cmd *cobra.Command, ids []string, cluster string, snapshot func() error) error {
	return f.watchPoolsWhere(cmd, ids, cluster, nil, snapshot)
}

// watchPoolsWhere is watchPools printing only the pools whose labels sel
// matches (all of them when sel is empty).
func (f *clientFlags) watchPoolsWhere(cmd *cobra.Command, ids []string, cluster string, sel kpool.Selector, snapshot func() error) error {
	c := f.client()
	out := cmd.OutOrStdout()
	names := f.names(cmd)
	for _, id := range ids {
		names.pool(id) // its name, for the DELETED line
	}
	row := func(p *kpool.NodePool) error {
		names.pools[p.ID] = p.Name
		if cols, ok, err := columnsOf(f.output); ok && err == nil {
			return printColumns(out, p, cols, true) // the list printed the header
		}
		if !f.table() {
			return f.print(cmd, p, nil)
		}
		tw := tabwriter.NewWriter(&noHeader{w: out}, 0, 8, 3, ' ', 0)
		poolTable(tw, []*kpool.NodePool{p}, names, f.wide(), f.clock.Now())
		return tw.Flush()
	}
	errEnd := errors.New("watched pool is gone")
	err := c.Watch(cmd.Context(), snapshot, func(cs []api.Change) error {
		seen := map[string]bool{}
		for _, ch := range cs {
			if ch.Type == "resync" && ids != nil {
				ch.ObjectID = ids[0]
			}
			if !strings.HasPrefix(ch.Type, "nodepool.") && ch.Type != "resync" || seen[ch.ObjectID] || ch.ObjectID == "" {
				continue
			}
			if ids != nil && !contains(ids, ch.ObjectID) || cluster != "" && ch.ClusterID != cluster && ch.Type != "resync" {
				continue
			}
			seen[ch.ObjectID] = true
			p, err := c.NodePool(cmd.Context(), ch.ObjectID)
			if kpool.ErrorCode(err) == kpool.CodeNotFound {
				_, shownBefore := names.pools[ch.ObjectID]
				if f.table() && (len(sel) == 0 || shownBefore) {
					_, _ = io.WriteString(out, names.pool(ch.ObjectID)+"   DELETED\n")
				}
				if ids != nil {
					return errEnd
				}
				continue
			}
			if err != nil {
				return err
			}
			if !sel.Matches(p.Spec.Labels) {
				continue
			}
			if err := row(p); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errEnd) {
		return nil
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
