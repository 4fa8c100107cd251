package main

import (
	"fmt"
	"io"
	"time"

	"github.com/kpool/kpool"
)

func clusterTable(w io.Writer, cs []*kpool.Cluster, wide bool, now time.Time) {
	head := "ID\tNAME\tPLATFORM\tTEAM\tPHASE\tREACHABLE\tAGE"
	if wide {
		head += "\tREGION\tOWNER\tENDPOINT\tMESSAGE"
	}
	fmt.Fprintln(w, head)
	for _, c := range cs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s", c.ID, c.Name, c.Spec.Platform.Type, orDash(c.Team), orDash(string(c.Status.Phase)), reachable(c.Status), age(c.CreatedAt, now))
		if wide {
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%s", orDash(profiles.Profile(c.Spec.Platform.Type).Region(&c.Spec)), c.CreatedBy, orDash(c.Spec.Endpoint),
				orDash(oneLine(c.Status.Unreachable())))
		}
		fmt.Fprintln(w)
	}
}

// reachable is a cluster's Reachable condition in a table: yes, "no
// (Reason)", or - while no controller has looked.
func reachable(st kpool.ClusterStatus) string {
	c := st.Condition(kpool.ConditionReachable)
	switch {
	case c == nil:
		return "-"
	case c.Status == kpool.ConditionTrue:
		return "yes"
	case c.Reason != "":
		return "no (" + c.Reason + ")"
	}
	return "no"
}

func clusterView(w io.Writer, c *kpool.Cluster, now time.Time) {
	kv := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	kv("Name", c.Name)
	kv("ID", c.ID)
	kv("Platform", c.Spec.Platform.Type)
	if c.Team != "" {
		kv("Team", c.Team)
	}
	block := platformBlock(c.Spec.Platform, c.Spec.Platform.Type)
	for _, k := range sortedKeys(block) {
		fmt.Fprintf(w, "  %s:\t%s\n", k, format(block[k]))
	}
	if c.Spec.Endpoint != "" {
		kv("Endpoint", c.Spec.Endpoint)
	}
	kv("Generation", c.Generation)
	kv("Resource version", c.ResourceVersion)
	kv("Phase", orDash(string(c.Status.Phase)))
	if c.Status.Message != "" {
		kv("Message", c.Status.Message)
	}
	kv("Created", when(c.CreatedAt, now)+" by "+c.CreatedBy)
	kv("Updated", when(c.UpdatedAt, now))
	if c.DeletionTimestamp != nil {
		kv("Deletion requested", when(*c.DeletionTimestamp, now))
	}
	fmt.Fprintln(w, "Conditions:")
	conditions(w, "  ", c.Status.Conditions, now)
	providerPools(w, c.Status)
}

// providerPools lists the pools the controllers found at the provider that
// are not the cluster's: those another kpool owns (their owner's mark),
// and the unmarked ones an import may take.
func providerPools(w io.Writer, st kpool.ClusterStatus) {
	if len(st.Foreign) > 0 {
		fmt.Fprintln(w, "At the provider, owned by another kpool (never touched; an admin may import one with --force):")
		for _, f := range st.Foreign {
			mark := "installation " + f.Installation
			if f.Pool != "" {
				mark += ", pool " + f.Pool
			}
			fmt.Fprintf(w, "  %s\t%s\n", f.ProviderName, mark)
		}
	}
	if len(st.Unmarked) > 0 {
		fmt.Fprintln(w, "At the provider, unmarked (kpool cluster import CLUSTER PROVIDER_NAME):")
		for _, u := range st.Unmarked {
			fmt.Fprintf(w, "  %s\t%s\n", u.ProviderName, orDash(u.Name))
		}
	}
}
