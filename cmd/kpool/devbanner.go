package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/k3s"
	"github.com/kpool/kpool/service"
)

// devBanner is what kpool dev prints at start: where to look, the demo
// clusters, the token, and commands to try that fit what already exists.
type devBanner struct {
	url, database string
	owner         string
	emu           *cloudsim.Running
	demos         []kpool.Cluster
	// ids are the demo clusters' ids by name; left, why a demo cluster
	// was not registered.
	ids, left map[string]string
	// moved are the clusters, other than the demo ones, moved from an
	// earlier run's emulators to this run's.
	moved     []devMove
	token     *devTokenUse
	tokenFile string
	// pools are the node pools of each demo cluster, by its id.
	pools map[string][]*kpool.NodePool
}

// setUpDev readies kpool dev's database for this run: the clusters on
// earlier runs' emulators moved to this run's, the demo clusters, and the
// dev token (the last run's when it still works).
func setUpDev(ctx context.Context, p *process, f *serveFlags, emu *cloudsim.Running, owner string) (*devBanner, error) {
	recFile := devEmulatorsFile(f.database)
	rec, err := readEmulatorRecord(recFile)
	if err != nil {
		return nil, err
	}
	m := &emulatorMover{now: emulatorOrigins(emu), before: rec}
	for _, e := range splitList(f.allowedEndpoints) {
		if o, err := kpool.Origin(e); err == nil {
			m.allowed = append(m.allowed, o)
		}
	}
	moves, keep, err := m.move(ctx, p.svc)
	if err != nil {
		return nil, err
	}
	b := &devBanner{database: f.database, owner: owner, emu: emu, tokenFile: devTokenFile(f.database)}
	// Beside the emulators' clusters, a k3s one: a platform without node
	// pools, where every pool operation is a clean NOT_IMPLEMENTED.
	b.demos = append(slices.Clone(emu.Clusters), k3s.Demo())
	if b.ids, b.left, err = registerDemos(ctx, p.svc, owner, b.demos); err != nil {
		return nil, err
	}
	for _, mv := range moves {
		if !slices.Contains(mapValues(b.ids), mv.ID) {
			b.moved = append(b.moved, mv)
		}
	}
	if err := writeEmulatorRecord(recFile, keep); err != nil {
		return nil, err
	}
	if b.token, err = devToken(ctx, p.store, owner, b.tokenFile, time.Now()); err != nil {
		return nil, err
	}
	b.pools = map[string][]*kpool.NodePool{}
	uctx := kpool.WithIdentity(ctx, &kpool.Identity{Email: owner})
	for _, id := range b.ids {
		l, err := p.svc.NodePools(uctx, service.ListOptions{ClusterID: id, Limit: kpool.MaxLimit})
		if err != nil {
			return nil, err
		}
		b.pools[id] = l.Items
	}
	return b, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// print writes the banner to out.
func (b *devBanner) print(out io.Writer) {
	url := b.url
	fmt.Fprintf(out, "kpool dev: API %s (database %s), emulators %s\n", url, redact(b.database), strings.Join(b.emu.URLs(), ", "))
	fmt.Fprintf(out, "  dashboard: %s/ (sign in with the token below)\n  metrics:  %s/metrics\n  API doc:  %s/api/v1/openapi.json\n\nDemo clusters, owned by %s:\n", url, url, url, b.owner)
	for _, d := range b.demos {
		if why, ok := b.left[d.Name]; ok {
			fmt.Fprintf(out, "  %-10s not registered: %s\n", d.Name, why)
			continue
		}
		how := "emulated"
		if !profiles.Profile(d.Spec.Platform.Type).Capabilities().NodePools {
			how = "no node pools: a pool there is 501 NOT_IMPLEMENTED"
		}
		fmt.Fprintf(out, "  %-10s %s  (%s, %s)\n", d.Name, b.ids[d.Name], d.Spec.Platform.Type, how)
	}
	b.describeMoved(out)
	describeDevKubeconfigs(out, b.emu)
	b.describeTry(out)
}

// describeMoved says which of the users' clusters were moved to this
// run's emulators, and which could not be (they keep a dead endpoint).
func (b *devBanner) describeMoved(out io.Writer) {
	if len(b.moved) == 0 {
		return
	}
	fmt.Fprintf(out, "\nClusters on the last run's emulators, pointed at this run's:\n")
	for _, mv := range b.moved {
		if mv.Err != nil {
			fmt.Fprintf(out, "  %s (%s): NOT moved, it stays at %s: %v\n", mv.Name, mv.Owner, mv.From, mv.Err)
			continue
		}
		fmt.Fprintf(out, "  %s (%s): %s -> %s\n", mv.Name, mv.Owner, mv.From, mv.To)
	}
}

// describeTry prints the token and the commands to try: a pool on each
// emulated demo cluster that has none, a scale of one that has.
func (b *devBanner) describeTry(out io.Writer) {
	if len(b.emu.Clusters) == 0 {
		return
	}
	fmt.Fprintf(out, "\nTry it (%s):\n  export KPOOL_SERVER=%s KPOOL_TOKEN=%s\n", b.tokenNote(), b.url, b.token.Secret)
	fmt.Fprintf(out, "  # the token is kept in %s (yours only; a context's --token-file may name it); revoke it with\n", shellWord(b.tokenFile))
	fmt.Fprintf(out, "  #   go run ./cmd/kpool token revoke %s --database %s\n", b.token.Token.ID, shellWord(redact(b.database)))
	for _, d := range b.emu.Clusters {
		id, ok := b.ids[d.Name]
		if !ok {
			continue
		}
		if pools := b.pools[id]; len(pools) > 0 {
			describeScale(out, d.Name, pools)
			continue
		}
		pt := d.Spec.Platform.Type
		caps := profiles.Profile(pt).Capabilities()
		zones := " --zones 1"
		if caps.Zones == provider.ZonesNone {
			zones = "" // a provider without zones
		}
		cli := profiles.Profile(pt).CLI()
		if cli.ExampleFlags != "" {
			zones += " " + cli.ExampleFlags
		}
		fmt.Fprintf(out, "  # a pool on %s (%s):\n  go run ./cmd/kpool nodepool create web --cluster %s --machine-type %s --count 3%s --wait\n",
			d.Name, caps.Name, d.Name, cli.MachineExample, zones) // a cluster is named by its name
	}
	fmt.Fprintf(out, "  go run ./cmd/kpool nodepool list\n  go run ./cmd/kpool events\n")
}

// tokenNote says whose the token is and whether it is the last run's.
func (b *devBanner) tokenNote() string {
	switch t := b.token; {
	case t.Same:
		return fmt.Sprintf("the token is %s's, the same as the last run's", b.owner)
	case t.Why != "":
		return fmt.Sprintf("a new dev token for %s: %s", b.owner, t.Why)
	}
	return fmt.Sprintf("a new token for %s, kept for the next runs", b.owner)
}

// describeScale suggests a scale of the first of a cluster's pools (to
// twice its count, which divides over its zones as the count did), as a
// create of a name taken would be refused.
func describeScale(out io.Writer, cluster string, pools []*kpool.NodePool) {
	names := make([]string, len(pools))
	for i, p := range pools {
		names[i] = p.Name
	}
	fmt.Fprintf(out, "  # %s has pools (%s):\n", cluster, strings.Join(names, ", "))
	p := pools[0]
	n := p.Spec.NodeCount
	if n == nil || *n == 0 || p.Spec.Autoscaling.On() {
		fmt.Fprintf(out, "  go run ./cmd/kpool nodepool get %s --cluster %s\n", p.Name, cluster)
		return
	}
	fmt.Fprintf(out, "  go run ./cmd/kpool nodepool scale %s --cluster %s --count %d --wait\n", p.Name, cluster, 2**n)
}

// shellWord quotes s for a POSIX shell when it needs it (a data folder
// with a space, as on macOS).
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
