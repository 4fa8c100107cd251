package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// nodes is a pool's size: the count, or "min-max (count)" with autoscaling.
func nodes(s *kpool.NodePoolSpec) string {
	n := "-"
	if s.NodeCount != nil {
		n = fmt.Sprint(*s.NodeCount)
	}
	if !s.Autoscaling.On() {
		return n
	}
	return fmt.Sprintf("%s-%s (%s)", intOr(s.Autoscaling.MinNodes), intOr(s.Autoscaling.MaxNodes), n)
}

func intOr(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

// nodesColumn is a pool's NODES column: its Ready nodes as Kubernetes
// counts them ("-" until the controller has looked) over the count it
// asks, or its autoscaling bounds when it asks none.
func nodesColumn(p *kpool.NodePool) string {
	ready := "-"
	if k := p.Status.Nodes; k != nil {
		ready = fmt.Sprint(k.Ready)
	}
	s := &p.Spec
	desired := intOr(s.NodeCount)
	if s.NodeCount == nil && s.Autoscaling.On() {
		desired = intOr(s.Autoscaling.MinNodes) + "-" + intOr(s.Autoscaling.MaxNodes)
	}
	return ready + "/" + desired
}

// pools is the table callback of f.print for ps, naming their clusters.
func (f *clientFlags) pools(cmd *cobra.Command, ps ...*kpool.NodePool) func(io.Writer) {
	return func(w io.Writer) { poolTable(w, ps, f.names(cmd), f.wide(), f.clock.Now()) }
}

// poolTable lists pools as NAME CLUSTER MACHINE NODES PHASE AGE, which fits
// 80 columns for realistic names; wide adds the IDs and the rest.
func poolTable(w io.Writer, ps []*kpool.NodePool, names *shown, wide bool, now time.Time) {
	head := "NAME\tCLUSTER\tMACHINE\tNODES\tPHASE\tAGE"
	if wide {
		head += "\tHEALTH\tSIZE\tGEN\tPLATFORM\tLOGICAL POOL\tPROVIDER NAME\tZONES\tMODE\tLABELS\tID\tCLUSTER ID\tMESSAGE"
	}
	fmt.Fprintln(w, head)
	for _, p := range ps {
		b := profiles.Profile(p.Spec.Platform.Type).Block(nil, &p.Spec)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s", p.Name, names.cluster(p.ClusterID), orDash(b.MachineType), nodesColumn(p),
			orDash(string(p.Status.Phase)), age(p.CreatedAt, now))
		if wide {
			zones := p.Spec.Zones
			if len(zones) == 0 {
				zones = b.Zones
			}
			fmt.Fprintf(w, "\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", orDash(string(p.Status.Health)), nodes(&p.Spec),
				p.Generation, p.Status.ObservedGeneration, orDash(string(p.Spec.Platform.Type)), p.LogicalPool(), orDash(p.ProviderName),
				orDash(strings.Join(zones, ",")), orDash(p.Spec.Mode), orDash(joinMap(p.Spec.Labels)), p.ID, p.ClusterID, orDash(oneLine(p.Status.Message)))
		}
		fmt.Fprintln(w)
	}
}

// poolView shows a pool; cloud is the node count its cloud reports (-1:
// not asked, or none said), shown beside Kubernetes' count.
func poolView(w io.Writer, p *kpool.NodePool, names *shown, cloud int, now time.Time) {
	kv := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	s := &p.Spec
	pt := s.Platform.Type
	kv("Name", p.Name)
	kv("ID", p.ID)
	kv("Cluster", names.cluster(p.ClusterID))
	kv("Platform", orDash(string(pt)))
	if p.ProviderName != "" {
		kv("Provider name", p.ProviderName)
	}
	b := profiles.Profile(pt).Block(nil, s)
	kv("Machine type", orDash(b.MachineType))
	size := nodes(s)
	if s.Autoscaling.On() {
		size = fmt.Sprintf("%s (autoscaling %s-%s)", intOr(s.NodeCount), intOr(s.Autoscaling.MinNodes), intOr(s.Autoscaling.MaxNodes))
	}
	kv("Nodes", size)
	if k := p.Status.Nodes; k != nil {
		kv("Kubernetes nodes", kubeNodes(k, cloud))
	}
	block := platformBlock(s.Platform, pt)
	fields := poolFields(pt)
	shown := map[string]bool{fields.MachineType: true, "labels": true, "taints": true}
	// Zones: the logical ones, with the platform block's own names when it
	// gives them too (the server makes sure that they agree).
	if len(s.Zones) > 0 {
		z := strings.Join(s.Zones, ", ")
		if v, ok := block[fields.Zones]; ok && fields.Zones != "" {
			z += " (" + format(v) + ")"
			shown[fields.Zones] = true
		}
		kv("Zones", z)
	}
	for _, f := range []struct{ label, field string }{{"Zones", fields.Zones}, {"Disk size", fields.DiskSize}, {"Spot", fields.Spot}} {
		if v, ok := block[f.field]; ok && f.field != "" && !shown[f.field] {
			kv(f.label, format(v))
			shown[f.field] = true
		}
	}
	var rest []string
	for _, k := range sortedKeys(block) {
		if !shown[k] {
			rest = append(rest, k+"="+format(block[k]))
		}
	}
	if len(rest) > 0 {
		kv("Platform settings", strings.Join(rest, "; "))
	}
	kv("Mode", orDash(s.Mode))
	if s.KubernetesVersion != "" {
		kv("Kubernetes version", s.KubernetesVersion)
	}
	kv("Labels", orDash(joinMap(provider.Labels(b, s))))
	var taints []string
	for _, t := range provider.Taints(b, s) {
		taints = append(taints, taint(t))
	}
	kv("Taints", orDash(strings.Join(taints, ", ")))
	if len(s.Tags) > 0 {
		kv("Tags", joinMap(s.Tags))
	}
	if u := s.UpdateStrategy; u != nil {
		kv("Update strategy", strategyView(u))
	}
	poolStatusView(w, p, now)
}

// poolStatusView is the end of poolView: generation, phase, the
// replacement under way, and when the pool was made and changed.
func poolStatusView(w io.Writer, p *kpool.NodePool, now time.Time) {
	kv := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	pt := p.Spec.Platform.Type
	kv("Generation", fmt.Sprintf("%d (observed %d)", p.Generation, p.Status.ObservedGeneration))
	kv("Resource version", p.ResourceVersion)
	kv("Phase", phase(p.Status.Phase, p.Status.Health))
	if p.Status.Message != "" {
		kv("Message", p.Status.Message)
	}
	if p.Status.NoController() {
		kv("Controller", "none in this kpool acts on "+string(pt)+" pools: an external controller must report status")
	}
	replacementView(w, p.Name, p.Status.Replacement, now)
	kv("Created", when(p.CreatedAt, now)+" by "+p.CreatedBy)
	kv("Updated", when(p.UpdatedAt, now))
	if p.DeletionTimestamp != nil {
		kv("Deletion requested", when(*p.DeletionTimestamp, now))
	}
}
