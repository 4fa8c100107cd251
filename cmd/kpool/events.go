package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

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
			return f.print(cmd, list, func(w io.Writer) {
				names := f.names(cmd)
				for _, e := range list.Events {
					if e.ObjectName == "" && strings.HasPrefix(e.Type, "nodepool.") {
						names.listPools() // events written before object_name
						break
					}
				}
				eventTable(w, list, names, f.wide(), time.Now())
			})
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

// eventTable lists events, newest first: AGE ACTION OBJECT ACTOR DETAIL,
// the object by kind and name ("updated", "pool web") and the detail cut so
// that a line fits 80 columns; wide: the time, the whole type, cluster,
// generations, request and object ID too.
func eventTable(w io.Writer, l *api.EventList, names *shown, wide bool, now time.Time) {
	objects := make([]string, len(l.Events))
	for i, e := range l.Events {
		objects[i] = eventObject(e, names, wide)
	}
	if wide {
		fmt.Fprintln(w, "TIME\tTYPE\tOBJECT\tCLUSTER\tGENERATION\tACTOR\tREQUEST\tOBJECT ID\tDETAIL")
		for i, e := range l.Events {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d→%d\t%s\t%s\t%s\t%s\n", e.CreatedAt.UTC().Format(time.RFC3339), e.Type, objects[i],
				orDash(names.cluster(e.ClusterID)), e.GenerationBefore, e.Generation, e.Actor, orDash(e.RequestID), e.ObjectID, orDash(oneLine(e.Detail)))
		}
	} else {
		// AGE, ACTION, OBJECT and ACTOR as wide as their longest, with the
		// table's 3-space gaps; DETAIL gets the rest of 80 columns.
		widths := []int{len("AGE"), len("ACTION"), len("OBJECT"), len("ACTOR")}
		rows := make([][]string, len(l.Events))
		details := make([]string, len(l.Events))
		for i, e := range l.Events {
			_, action, _ := strings.Cut(e.Type, ".")
			who, what := reporter(e)
			rows[i], details[i] = []string{age(e.CreatedAt, now), orDash(action), objects[i], actor(orDash(who))}, what
			for j, c := range rows[i] {
				widths[j] = max(widths[j], utf8.RuneCountInString(c))
			}
		}
		room := 80
		for _, n := range widths {
			room -= n + 3
		}
		room = max(room, 10)
		fmt.Fprintln(w, "AGE\tACTION\tOBJECT\tACTOR\tDETAIL")
		for i := range rows {
			fmt.Fprintf(w, "%s\t%s\n", strings.Join(rows[i], "\t"), fit(orDash(oneLine(details[i])), room))
		}
	}
	if l.Next != "" {
		fmt.Fprintf(w, "(older events: --all, or the API's after=%s)\n", l.Next)
	}
}

// maxActor is the widest ACTOR of the events table: a controller's name
// ("civo-nodepool-controller") fits.
const maxActor = 24

// reporter is the ACTOR and DETAIL of an event in the default table: a
// controller's report ("eks-nodepool-controller: Ready=True …") is shown
// as by that controller, its conditions summed up (statusSummary); any
// other event as it is.
func reporter(e kpool.Event) (who, what string) {
	name, rest, ok := strings.Cut(e.Detail, ": ")
	if !strings.HasSuffix(e.Type, ".status") || !ok || !strings.HasSuffix(name, "-controller") || strings.ContainsAny(name, " \t") {
		return e.Actor, e.Detail
	}
	return name, statusSummary(rest)
}

// statusSummary shortens a report's detail ("Ready=False (Creating),
// Progressing=True (Creating), Drifted=False; Ready: creating web at gcp;
// nodes 0/3") to what a row of 80 columns has room for: the conditions
// that are not in their quiet state, Ready's reason first ("Creating, nodes
// 0/3: creating web at gcp"); "Ready" (or "healthy", for a report without
// Ready) when all are quiet.
func statusSummary(detail string) string {
	parts := strings.Split(detail, "; ")
	var heads []string
	for _, c := range strings.Split(parts[0], ", ") {
		typ, rest, _ := strings.Cut(c, "=")
		status, reason, _ := strings.Cut(rest, " ")
		reason = strings.Trim(reason, "()")
		switch {
		case typ == kpool.ConditionReady && status != "True":
			heads = append([]string{orWord(reason, "Not ready")}, heads...)
		case typ == kpool.ConditionDrifted || typ == kpool.ConditionDegraded:
			if status == "True" {
				heads = append(heads, strings.TrimSpace(typ+" "+reason))
			}
		case typ == kpool.ConditionProgressing || status == "True":
		default:
			heads = append(heads, c)
		}
	}
	if len(heads) == 0 {
		heads = []string{"healthy"}
		if strings.Contains(parts[0], kpool.ConditionReady+"=True") {
			heads[0] = "Ready"
		}
	}
	var why []string
	for _, p := range parts[1:] {
		if strings.HasPrefix(p, "nodes ") {
			heads = append(heads, p)
		} else {
			why = append(why, p)
		}
	}
	out := strings.Join(heads, ", ")
	for _, w := range why {
		_, msg, ok := strings.Cut(w, ": ")
		if !ok {
			msg = w
		}
		out += ": " + msg
	}
	return out
}

// orWord is s, or w when s is empty.
func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// actor is an event's actor cut to maxActor: an e-mail address that is
// too long keeps its local part ("controllers@…"), which says who.
func actor(s string) string {
	if utf8.RuneCountInString(s) <= maxActor {
		return s
	}
	if local, _, ok := strings.Cut(s, "@"); ok && utf8.RuneCountInString(local)+2 <= maxActor {
		return local + "@…"
	}
	return fit(s, maxActor)
}

// eventObject is an event's object as a person reads it: its kind and its
// name ("pool web", "cluster demo-aks"): the name the event recorded, else
// the object's now, else its ID (an object since deleted, or not visible),
// cut to its first 8 characters unless wide.
func eventObject(e kpool.Event, names *shown, wide bool) string {
	kind, _, _ := strings.Cut(e.Type, ".")
	name := e.ObjectID
	switch {
	case e.ObjectName != "":
		name = e.ObjectName
	case kind == "nodepool":
		name = names.pool(e.ObjectID)
	case kind == "cluster":
		name = names.cluster(e.ObjectID)
	}
	if kind == "nodepool" {
		kind = "pool"
	}
	if name == e.ObjectID && !wide && kpool.IsUUID(strings.ToLower(name)) {
		name = name[:8]
	}
	return kind + " " + name
}
