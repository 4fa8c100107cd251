package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// logicalCount is a logical pool's asked size: its node count, or its
// autoscaling bounds as MIN-MAX.
func logicalCount(s *kpool.LogicalPoolSpec) string {
	if a := s.Autoscaling; a != nil && a.Enabled {
		return intOr(a.MinNodes) + "-" + intOr(a.MaxNodes)
	}
	return intOr(s.NodeCount)
}

// logicalTable lists logical pools (NAME COUNT READY MEMBERS MESSAGE), the
// message cut so that a line fits 80 columns.
func logicalTable(w io.Writer, lps []*kpool.LogicalPool) {
	name := len("NAME")
	for _, lp := range lps {
		name = max(name, len(lp.Name))
	}
	// NAME, then COUNT, READY and MEMBERS with the table's 3-space gaps.
	room := max(20, 80-(name+3)-(len("COUNT")+3)-(len("READY")+3)-(len("MEMBERS")+3))
	fmt.Fprintln(w, "NAME\tCOUNT\tREADY\tMEMBERS\tMESSAGE")
	for _, lp := range lps {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\n", lp.Name, logicalCount(&lp.Spec), lp.Status.ReadyNodes, len(lp.Status.Members),
			fit(orDash(oneLine(lp.Status.Message)), room))
	}
}

// logicalView shows one logical pool: its size, message, members and the
// offerings that ran out.
func logicalView(w io.Writer, lp *kpool.LogicalPool, cluster string, now time.Time) {
	fmt.Fprintf(w, "Name:\t%s\n", lp.Name)
	fmt.Fprintf(w, "Cluster:\t%s\n", cluster)
	fmt.Fprintf(w, "Count/Ready:\t%s/%d\n", logicalCount(&lp.Spec), lp.Status.ReadyNodes)
	if lp.DeletionTimestamp != nil {
		fmt.Fprintf(w, "Deleting:\tsince %s\n", when(*lp.DeletionTimestamp, now))
	}
	fmt.Fprintf(w, "Message:\t%s\n", orDash(oneLine(lp.Status.Message)))
	fmt.Fprintln(w, "Members:")
	membersTable(w, lp.Status.Members, true)
	if len(lp.Status.Unavailable) > 0 {
		fmt.Fprintln(w, "Unavailable offerings:")
		fmt.Fprintln(w, "  ZONE\tMACHINE-TYPE\tSINCE\tUNTIL\tCODE")
		for _, u := range lp.Status.Unavailable {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", orDash(u.Zone), machine(u.Offering), when(u.Since, now), until(u.Until, now), orDash(u.Code))
		}
	}
}

// membersTable lists members: with status, the nodes ready and whether the
// logical pool made each; without, what a plan would make.
func membersTable(w io.Writer, ms []kpool.LogicalMember, status bool) {
	if len(ms) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	if status {
		fmt.Fprintln(w, "  NAME\tZONE\tMACHINE-TYPE\tSPOT\tNODES\tREADY\tMADE")
	} else {
		fmt.Fprintln(w, "  NAME\tZONE\tMACHINE-TYPE\tSPOT\tNODES")
	}
	for _, m := range ms {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%d", m.Name, orDash(m.Zone), m.MachineType, yesNo(m.Spot), m.NodeCount)
		if status {
			fmt.Fprintf(w, "\t%d\t%s", m.ReadyNodes, yesNo(m.Made))
		}
		fmt.Fprintln(w)
	}
}

// logicalPlanView is a dry run's plan: the members the logical pool would
// make, and the order in which it takes its offerings.
func logicalPlanView(w io.Writer, lp *kpool.LogicalPool, c *kpool.Cluster) {
	fmt.Fprintf(w, "Logical pool %s in cluster %s, %s nodes (dry run: nothing is created)\n", lp.Name, c.Name, logicalCount(&lp.Spec))
	fmt.Fprintln(w, "Members it would make:")
	membersTable(w, lp.Status.Members, false)
	fmt.Fprintln(w, "Fallback order:")
	for _, line := range fallbackOrder(lp, c) {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// fallbackOrder says, one line each, the alternatives a logical pool
// takes in order: "1. Standard_D4s_v5 in zones 1,2,3 (preferred)".
func fallbackOrder(lp *kpool.LogicalPool, c *kpool.Cluster) []string {
	var out []string
	for i, a := range lp.Spec.Alternatives(profiles, c) {
		if len(a.Offerings) == 0 {
			continue
		}
		s := strconv.Itoa(i+1) + ". " + machine(a.Offerings[0])
		var zones []string
		for _, o := range a.Offerings {
			if o.Zone != "" {
				zones = append(zones, o.Zone)
			}
		}
		if len(zones) > 0 {
			s += " in zones " + strings.Join(zones, ",")
		}
		if a.Rank == 0 {
			s += " (preferred)"
		}
		out = append(out, s)
	}
	return out
}

// machine is an offering's machine type, with "spot" when it is one.
func machine(o kpool.Offering) string {
	if o.Spot {
		return o.MachineType + " spot"
	}
	return o.MachineType
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// until is when an unavailable offering is next tried: "in 2m" or "now".
func until(t, now time.Time) string {
	if !t.After(now) {
		return "now"
	}
	return "in " + age(now, t)
}

// keepLabelled keeps the logical pools of list whose template's labels sel
// matches, as the server does (an older one does not); all: the list is
// whole, so its total is what is kept.
func keepLabelled(list *api.LogicalPoolList, sel kpool.Selector, all bool) {
	list.LogicalPools = slices.DeleteFunc(list.LogicalPools, func(lp *kpool.LogicalPool) bool { return !sel.Matches(lp.Spec.Template.Labels) })
	if all {
		list.Total = len(list.LogicalPools)
	}
}
