package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// clusterTable lists clusters as NAME PLATFORM TEAM PHASE REACHABLE AGE,
// which fits 80 columns; wide adds the ID, region, owner, endpoint and message.
func clusterTable(w io.Writer, cs []*kpool.Cluster, wide bool, now time.Time) {
	head := "NAME\tPLATFORM\tTEAM\tPHASE\tREACHABLE\tAGE"
	if wide {
		head += "\tID\tREGION\tOWNER\tENDPOINT\tMESSAGE"
	}
	fmt.Fprintln(w, head)
	for _, c := range cs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s", c.Name, c.Spec.Platform.Type, orDash(c.Team), orDash(string(c.Status.Phase)), reachable(c.Status), age(c.CreatedAt, now))
		if wide {
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%s\t%s", c.ID, orDash(profiles.Profile(c.Spec.Platform.Type).Region(&c.Spec)), c.CreatedBy, orDash(c.Spec.Endpoint),
				orDash(oneLine(c.Status.Unreachable())))
		}
		fmt.Fprintln(w)
	}
}

// reachable is a cluster's Reachable condition in a table: yes, "no
// (Reason)", unknown when a controller reported it so, or - while no
// controller has looked.
func reachable(st kpool.ClusterStatus) string {
	c := st.Condition(kpool.ConditionReachable)
	switch {
	case c == nil:
		return "-"
	case c.Status == kpool.ConditionTrue:
		return "yes"
	case c.Status == kpool.ConditionUnknown:
		return "unknown"
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

// clusterWithFacts is a cluster as `cluster get -o json|yaml` prints it:
// the API's cluster, with what kpool learnt of its provider and how long
// ago.
type clusterWithFacts struct {
	*kpool.Cluster
	Facts    *kpool.ClusterFacts `json:"facts,omitempty"`
	FactsAge string              `json:"factsAge,omitempty"`
}

// MarshalJSON writes the cluster's own members and the facts beside them.
func (c clusterWithFacts) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(c.Cluster)
	if err != nil || c.Facts == nil {
		return base, err
	}
	extra, err := json.Marshal(struct {
		Facts    *kpool.ClusterFacts `json:"facts"`
		FactsAge string              `json:"factsAge"`
	}{c.Facts, c.FactsAge})
	if err != nil {
		return nil, err
	}
	return append(append(base[:len(base)-1], ','), extra[1:]...), nil
}

// factsView says what the cluster's provider offers its pools, as kpool
// learnt it: what creates and updates are checked against.
func factsView(w io.Writer, f *kpool.ClusterFacts, now time.Time) {
	if f == nil {
		fmt.Fprintln(w, "Offers:\tnot learnt yet (the controllers learn it once they reach the cluster; until then pools are not checked against it)")
		return
	}
	fmt.Fprintf(w, "Offers (learnt %s):\n", when(f.LearnedAt, now))
	kv := func(k string, v any) { fmt.Fprintf(w, "  %s:\t%v\n", k, v) }
	if f.Version != "" {
		kv("Version", f.Version)
	}
	if len(f.PoolVersions) > 0 {
		kv("Pool versions", strings.Join(f.PoolVersions, ", "))
	}
	if len(f.Zones) > 0 {
		kv("Zones", strings.Join(f.Zones, ", "))
	}
	if len(f.DefaultZones) > 0 {
		kv("Default zones", strings.Join(f.DefaultZones, ", "))
	}
	names := make([]string, 0, len(f.MachineTypes))
	for _, m := range f.MachineTypes {
		names = append(names, m.Name)
	}
	if len(names) > 0 {
		const shown = 12
		list := strings.Join(names[:min(shown, len(names))], ", ")
		if len(names) > shown {
			list += fmt.Sprintf(", … (%d more: -o yaml lists them with their CPUs, memory, GPUs and zones)", len(names)-shown)
		}
		kv(fmt.Sprintf("Machine types (%d)", len(names)), list)
	}
	for _, p := range f.Partial {
		kv("Not learnt", p)
	}
	if age := f.Age(now); age > provider.FactsMaxAge {
		fmt.Fprintf(w, "  (older than %s: pool writes are not checked against them until the controllers reach the provider again)\n", provider.FactsMaxAge)
	}
}
