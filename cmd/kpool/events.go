package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/audit"
)

// newEventsCmd is kpool events: the audit trail, newest first.
func newEventsCmd() *cobra.Command {
	f := &clientFlags{}
	var q audit.Query
	var all bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the audit trail: every write, who made it, when, in which request",
		Long: `Show the audit trail, newest first: every write to a cluster or node pool with
its actor, time, request id (the X-Request-ID of the write and of the server's
access log) and the object's generation before and after. You see the events of
the clusters you registered; admins see all.`,
		Example: `  kpool events --cluster CLUSTER_ID
  kpool events --pool POOL_ID -o json
  kpool events --type nodepool. --actor alice@example.com --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := f.client()
			if all && q.Limit == 0 {
				q.Limit = kpool.MaxLimit
			}
			var list *api.EventList
			seen := map[string]bool{}
			for {
				page, err := c.Events(cmd.Context(), q)
				if err != nil {
					return err
				}
				if list == nil {
					list = page
				} else {
					list.Events = append(list.Events, page.Events...)
				}
				list.Next = page.Next
				if !all || page.Next == "" {
					break
				}
				if seen[page.Next] {
					return fmt.Errorf("the server returned the cursor %q twice", page.Next)
				}
				seen[page.Next] = true
				q.After = page.Next
			}
			if f.table() && len(list.Events) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "No events found.")
				return nil
			}
			return f.print(cmd, list, func(w io.Writer) { eventTable(w, list) })
		},
	}
	f.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&q.ClusterID, "cluster", "", "only this cluster's events and its pools' (name or ID)")
	fs.StringVar(&q.NodePoolID, "pool", "", "only this node pool's events")
	fs.StringVar(&q.Type, "type", "", "an event type (nodepool.updated) or a kind and a dot (nodepool.)")
	fs.StringVar(&q.Actor, "actor", "", "only this caller's events (an e-mail address)")
	fs.IntVar(&q.Limit, "limit", 0, fmt.Sprintf("page size, 1-%d (default %d)", kpool.MaxLimit, kpool.DefaultLimit))
	fs.BoolVar(&all, "all", false, "follow the next cursor to the oldest event kept")
	return clusterFlagByName(cmd, f.client)
}

// eventTable lists events as kubectl lists them: a line each, newest first.
func eventTable(w io.Writer, l *api.EventList) {
	fmt.Fprintln(w, "TIME\tTYPE\tOBJECT\tGENERATION\tACTOR\tREQUEST\tDETAIL")
	for _, e := range l.Events {
		req := e.RequestID
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d→%d\t%s\t%s\t%s\n", e.CreatedAt.UTC().Format(time.RFC3339), e.Type, e.ObjectID,
			e.GenerationBefore, e.Generation, e.Actor, req, e.Detail)
	}
	if l.Next != "" {
		fmt.Fprintf(w, "(older events: --all, or the API's after=%s)\n", l.Next)
	}
}
