package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/apply"
)

// applyView shows the plan as terraform plan does (when the apply wrote
// nothing: a dry run, or a plan with a refusal), or what was done, then a
// count of each action.
func applyView(w io.Writer, rep apply.Report) {
	count := map[apply.Action]int{}
	for _, r := range rep.Results {
		count[r.Action]++
		if rep.Wrote {
			appliedRow(w, r)
		} else {
			planRow(w, r)
		}
	}
	words := []string{"to create", "to update", "to replace", "to delete", "unchanged"}
	head := "Plan"
	if rep.Wrote {
		words, head = []string{"created", "updated", "replaced", "deleted", "unchanged"}, "Applied"
	}
	line := fmt.Sprintf("%s: %d %s, %d %s, %d %s, %d %s, %d %s", head,
		count[apply.Create], words[0], count[apply.Update], words[1], count[apply.Replace], words[2],
		count[apply.Delete], words[3], count[apply.Unchanged], words[4])
	if n := count[apply.Skipped]; n > 0 {
		line += fmt.Sprintf(", %d skipped", n)
	}
	if n := count[apply.Refused]; n > 0 {
		line += fmt.Sprintf(", %d refused", n)
	}
	fmt.Fprintln(w, line+".")
}

// planRow shows what applying would do to one pool.
func planRow(w io.Writer, r apply.Result) {
	switch r.Action {
	case apply.Create:
		fmt.Fprintf(w, "+ nodepool %s will be created\n", r.Label())
		if r.NodePool != nil {
			lines := apply.Fields("spec", r.NodePool.Spec)
			for _, k := range sortedKeys(lines) {
				fmt.Fprintf(w, "    + %s = %s\n", k, lines[k])
			}
		}
	case apply.Update:
		fmt.Fprintf(w, "~ nodepool %s will be updated\n", r.Label())
		changeLines(w, r)
	case apply.Replace:
		fmt.Fprintf(w, "-/+ nodepool %s will be replaced by kpool without downtime (%s)\n", r.Label(), r.Plan.Replacement)
		changeLines(w, r)
	case apply.Delete:
		fmt.Fprintf(w, "- nodepool %s will be deleted (--prune: the file does not name it)\n", r.Label())
	case apply.Unchanged:
		fmt.Fprintf(w, "= nodepool %s unchanged\n", r.Label())
	case apply.Skipped:
		fmt.Fprintf(w, "# nodepool %s skipped by --prune: %s\n", r.Label(), r.Note)
	case apply.Refused:
		refusedRow(w, r, "would be refused")
	}
}

// appliedRow shows what was done to one pool.
func appliedRow(w io.Writer, r apply.Result) {
	switch r.Action {
	case apply.Create:
		fmt.Fprintf(w, "+ nodepool %s created\n", r.Label())
	case apply.Update:
		fmt.Fprintf(w, "~ nodepool %s updated (generation %d)\n", r.Label(), r.NodePool.Generation)
	case apply.Replace:
		fmt.Fprintf(w, "-/+ nodepool %s being replaced (%s; generation %d): kpool nodepool get %s --cluster %s follows it\n",
			r.Label(), r.Plan.Replacement, r.NodePool.Generation, r.Name, r.Cluster)
	case apply.Delete:
		if r.NodePool != nil && r.NodePool.Deleting() {
			fmt.Fprintf(w, "- nodepool %s deleting (its controller removes it at the provider)\n", r.Label())
		} else {
			fmt.Fprintf(w, "- nodepool %s deleted\n", r.Label())
		}
	case apply.Unchanged:
		fmt.Fprintf(w, "= nodepool %s unchanged\n", r.Label())
	case apply.Skipped:
		fmt.Fprintf(w, "# nodepool %s skipped by --prune: %s\n", r.Label(), r.Note)
	case apply.Refused:
		refusedRow(w, r, "refused")
	}
}

// refusedRow shows a refused pool: where the file has it, the error with
// each field and reason, the plan rows that caused it, and how to fix it.
func refusedRow(w io.Writer, r apply.Result, verb string) {
	where := ""
	if r.Document != "" {
		where = " (" + r.Document + ")"
	}
	fmt.Fprintf(w, "! nodepool %s%s %s: %s: %s\n", r.Label(), where, verb, r.Error.Code, r.Error.Message)
	changeLines(w, r)
	if r.Error.Details != "" && len(r.Error.Fields) == 0 {
		fmt.Fprintf(w, "    %s\n", oneLine(r.Error.Details))
	}
	for _, fe := range r.Error.Fields {
		fmt.Fprintf(w, "    %s: %s\n", fe.Field, oneLine(fe.Reason))
	}
	if r.Note != "" {
		fmt.Fprintf(w, "    fix: %s\n", r.Note)
	}
}

// changeLines shows the fields an update changes, each with its class at
// the provider: "~ spec.nodeCount: 2 -> 3   (in_place: the reason)",
// "- spec.labels.team: "web"", "+ spec.tags.env: "prod"". Without the
// pool before and after (a refused plan: the pool as it stays), the plan's
// own rows.
func changeLines(w io.Writer, r apply.Result) {
	ds := r.Differences()
	if r.Live == nil || r.NodePool == nil || len(ds) == 0 {
		planLines(w, r.Plan)
		return
	}
	for _, d := range ds {
		var line string
		switch {
		case d.Live == "":
			line = fmt.Sprintf("    + %s: %s", d.Field, d.File)
		case d.File == "":
			line = fmt.Sprintf("    - %s: %s", d.Field, d.Live)
		default:
			line = fmt.Sprintf("    ~ %s: %s -> %s", d.Field, d.Live, d.File)
		}
		if c, ok := changeOf(r.Plan, d.Field); ok {
			line += "   (" + classText(r.Plan, c)
			if c.Reason != "" {
				line += ": " + oneLine(c.Reason)
			}
			line += ")"
		}
		fmt.Fprintln(w, line)
	}
	if r.Plan != nil && len(r.Plan.Changes) > 0 {
		fmt.Fprintf(w, "    %s\n", planSummary(r.Plan))
	}
}

// changeOf is the plan's row of a field: its own, or that of the object
// or list it is in (spec.labels for spec.labels.team).
func changeOf(p *kpool.Plan, field string) (kpool.Change, bool) {
	if p == nil {
		return kpool.Change{}, false
	}
	for _, c := range p.Changes {
		if c.Field == field || strings.HasPrefix(field, c.Field+".") || strings.HasPrefix(c.Field, field+".") {
			return c, true
		}
	}
	return kpool.Change{}, false
}

// planLines shows a plan's changes: "~ spec.nodeCount: 2 -> 3  (in_place:
// the reason)".
func planLines(w io.Writer, p *kpool.Plan) {
	if p == nil {
		return
	}
	for _, c := range p.Changes {
		line := fmt.Sprintf("    ~ %s: %s -> %s   (%s", c.Field, jsonValue(c.From), jsonValue(c.To), classText(p, c))
		if c.Reason != "" {
			line += ": " + oneLine(c.Reason)
		}
		fmt.Fprintln(w, line+")")
	}
	if len(p.Changes) > 0 {
		fmt.Fprintf(w, "    %s\n", planSummary(p))
	}
}
