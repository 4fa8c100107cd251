package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

func newNodePoolCmd(clk clock) *cobra.Command {
	f := &clientFlags{clock: clk}
	cmd := &cobra.Command{
		Use:     "nodepool",
		Aliases: []string{"nodepools", "np"},
		Short:   "Create, list, show, change and delete node pools",
		RunE:    groupRun,
	}
	f.register(cmd)
	// Pools and clusters are named by name or by ID.
	cmd.AddCommand(clusterFlagByName(defaultClusterFlag(f, newPoolCreate(f)), f.client), clusterFlagByName(newPoolList(f), f.client),
		byName(f, newPoolGet(f), "node pool"), byName(f, newPoolUpdate(f), "node pool"), byName(f, newPoolScale(f), "node pool"),
		byName(f, newPoolDelete(f), "node pool"), byName(f, newPoolStatus(f), "node pool"))
	return cmd
}

// platformFlags are the pool flags that go into the platform's block: the
// neutral ones and the providers' own (--image-id).
var platformFlags = append([]string{"machine-type", "zones", "disk-size", "spot"}, providerFlagNames()...)

func providerFlagNames() []string {
	var out []string
	for _, f := range poolPlatformFlags() {
		out = append(out, f.Name)
	}
	return out
}

// specFlags are every flag that changes a pool's spec.
var specFlags = append([]string{"count", "min", "max", "label", "taint", "mode", "kubernetes-version", "tag"}, platformFlags...)

// poolFlags are the spec flags of nodepool create and update.
type poolFlags struct {
	machineType, mode, version  string
	count, min, max, diskSize   int
	zones, labels, taints, tags []string
	spot                        bool
	// own are the providers' own flags' values, by flag name.
	own map[string]any
}

func (f *poolFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.machineType, "machine-type", "", "machine type (the platform block's "+machineFields()+")")
	fs.IntVar(&f.count, "count", 0, "number of nodes (with autoscaling, the starting size)")
	registerBounds(fs, &f.min, &f.max)
	fs.StringSliceVar(&f.zones, "zones", nil, "zones, comma-separated: logical 1,2,3 (or <region>-1…), or the provider's own (us-central1-a, us-west-2a, AD-1); not civo")
	fs.IntVar(&f.diskSize, "disk-size", 0, "boot disk size in GB (not civo)")
	fs.BoolVar(&f.spot, "spot", false, "spot or preemptible nodes (not civo)")
	fs.StringArrayVar(&f.labels, "label", nil, "Kubernetes node label KEY=VALUE (repeatable)")
	fs.StringArrayVar(&f.taints, "taint", nil, "node taint KEY=VALUE:EFFECT or KEY:EFFECT (repeatable; replaces the pool's taints)")
	fs.StringVar(&f.mode, "mode", "", "pool mode: system or user")
	fs.StringVar(&f.version, "kubernetes-version", "", "Kubernetes version of the nodes, such as 1.30")
	fs.StringArrayVar(&f.tags, "tag", nil, "cloud resource tag KEY=VALUE (repeatable)")
	f.own = map[string]any{}
	for _, pf := range poolPlatformFlags() {
		usage := pf.Usage + " (" + strings.Join(typeNames(pf.platforms), ", ") + " only)"
		switch pf.Kind {
		case "bool":
			f.own[pf.Name] = fs.Bool(pf.Name, false, usage)
		case "number":
			f.own[pf.Name] = fs.Float64(pf.Name, 0, usage)
		default:
			f.own[pf.Name] = fs.String(pf.Name, "", usage)
		}
	}
}

func typeNames(ts []kpool.PlatformType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func registerBounds(fs *pflag.FlagSet, min, max *int) {
	fs.IntVar(min, "min", 0, "autoscaling minimum (enables autoscaling)")
	fs.IntVar(max, "max", 0, "autoscaling maximum (enables autoscaling)")
}

// bounds returns the autoscaling object of --min and --max, or nil.
func bounds(fs *pflag.FlagSet, min, max int) map[string]any {
	if !anyChanged(fs, "min", "max") {
		return nil
	}
	a := map[string]any{"enabled": true}
	if fs.Changed("min") {
		a["minNodes"] = min
	}
	if fs.Changed("max") {
		a["maxNodes"] = max
	}
	return a
}

// poolTarget is what the flags need to know of the pool they are for: its
// platform type and its cluster's region (both needed only when a platform
// flag was given).
type poolTarget struct {
	t      kpool.PlatformType
	region string
}

// spec returns the spec object the flags given make for the pool tgt.
func (f *poolFlags) spec(fs *pflag.FlagSet, tgt poolTarget) (map[string]any, error) {
	s := map[string]any{}
	if fs.Changed("count") {
		s["nodeCount"] = f.count
	}
	if a := bounds(fs, f.min, f.max); a != nil {
		s["autoscaling"] = a
	}
	if fs.Changed("mode") {
		if f.mode != kpool.ModeSystem && f.mode != kpool.ModeUser {
			return nil, fmt.Errorf("--mode %q: use system or user", f.mode)
		}
		s["mode"] = f.mode
	}
	if fs.Changed("kubernetes-version") {
		s["kubernetesVersion"] = f.version
	}
	for _, m := range []struct {
		flag, field string
		vs          []string
	}{{"label", "labels", f.labels}, {"tag", "tags", f.tags}} {
		if fs.Changed(m.flag) {
			kv, err := pairs(m.flag, m.vs)
			if err != nil {
				return nil, err
			}
			s[m.field] = kv
		}
	}
	if fs.Changed("taint") {
		ts := []kpool.Taint{}
		for _, v := range f.taints {
			t, err := parseTaint(v)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
		}
		s["taints"] = ts
	}
	block, err := f.block(fs, tgt, s)
	if err != nil {
		return nil, err
	}
	if len(block) > 0 {
		s["platform"] = map[string]any{string(tgt.t): block}
	}
	return s, nil
}

// block puts the provider-neutral machine flags into platform tgt.t's
// fields. Logical zones go to spec.zones (in s) instead.
func (f *poolFlags) block(fs *pflag.FlagSet, tgt poolTarget, s map[string]any) (map[string]any, error) {
	if !anyChanged(fs, platformFlags...) {
		return nil, nil
	}
	t := tgt.t
	if !profiles.Profile(t).Capabilities().NodePools {
		// No node pools on this platform: the server says so.
		return nil, nil
	}
	fields := poolFields(t)
	block := map[string]any{}
	for _, x := range []struct {
		flag, field string
		v           any
	}{
		{"machine-type", fields.MachineType, f.machineType},
		{"zones", fields.Zones, f.zones},
		{"disk-size", fields.DiskSize, f.diskSize},
		{"spot", fields.Spot, f.spot},
	} {
		if !fs.Changed(x.flag) {
			continue
		}
		if x.field == "" {
			return nil, fmt.Errorf("--%s does not apply to %s node pools: their platform block has no such field", x.flag, t)
		}
		if x.flag == "zones" {
			if err := f.placeZones(tgt, x.field, s, block); err != nil {
				return nil, err
			}
			continue
		}
		block[x.field] = x.v
	}
	for _, pf := range poolPlatformFlags() {
		if !fs.Changed(pf.Name) {
			continue
		}
		if !slices.Contains(pf.platforms, t) {
			return nil, fmt.Errorf("--%s does not apply to %s node pools (only to %s)", pf.Name, t, strings.Join(typeNames(pf.platforms), ", "))
		}
		switch v := f.own[pf.Name].(type) {
		case *bool:
			block[pf.Field] = *v
		case *float64:
			block[pf.Field] = *v
		case *string:
			block[pf.Field] = *v
		}
	}
	return block, nil
}

// placeZones puts --zones into spec.zones when they are logical zones ("1",
// "2"… or "<region>-1"…, which every provider with zones maps to its own),
// and into the platform block's own field (native) when they are the
// provider's names. The other of the two is emptied, so that the flag
// replaces the zones that a pool (or a -f FILE) has in either form; the
// server refuses the two when they disagree.
func (f *poolFlags) placeZones(tgt poolTarget, native string, s, block map[string]any) error {
	var logical, other []string
	for _, z := range f.zones {
		if kpool.IsLogicalZone(kpool.NormalizeZone(z, tgt.region)) {
			logical = append(logical, z)
		} else {
			other = append(other, z)
		}
	}
	switch {
	case len(logical) > 0 && len(other) > 0:
		return fmt.Errorf("--zones %s: give logical zones (1, 2, 3 or %s-1…) or %s's own zone names (%s), not both",
			strings.Join(f.zones, ","), orRegion(tgt.region), tgt.t, strings.Join(other, ", "))
	case len(logical) > 0:
		s["zones"], block[native] = logical, []string{}
	default: // the provider's names, or none
		if other == nil {
			other = []string{} // [] empties the field; null would keep it
		}
		s["zones"], block[native] = []string{}, other
	}
	return nil
}

func orRegion(r string) string {
	if r == "" {
		return "<region>"
	}
	return r
}

// parseTaint parses KEY=VALUE:EFFECT or KEY:EFFECT.
func parseTaint(s string) (kpool.Taint, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return kpool.Taint{}, fmt.Errorf("--taint %q: use KEY=VALUE:EFFECT or KEY:EFFECT, EFFECT being NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	k, v, _ := strings.Cut(s[:i], "=")
	if k == "" {
		return kpool.Taint{}, fmt.Errorf("--taint %q: the key is empty", s)
	}
	return kpool.Taint{Key: k, Value: v, Effect: s[i+1:]}, nil
}

func newPoolCreate(f *clientFlags) *cobra.Command {
	var (
		pf                poolFlags
		wf                waitFlags
		file, cluster, id string
		dryRun, perZone   bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME --cluster ID [flags] | create [NAME] -f FILE [flags]",
		Short: "Create a node pool",
		Long: `Create a node pool in a cluster.

The machine flags are provider-neutral: kpool reads the cluster to learn its
platform and puts --machine-type, --disk-size and --spot into the platform's
own fields. --zones takes logical zones (1,2,3, or <region>-1,… with the
cluster's region), sent as spec.zones and mapped by the server to each
provider's zones, or the provider's own zone names (us-central1-a,
us-west-2a, AD-1), sent in the platform's field. Labels and taints apply on
every platform; what a provider lacks (such as taints on OCI) is refused
with NOT_IMPLEMENTED. A few flags are one provider's own: --image-id,
--ocpus and --memory-gb (oci: the node image, default the cluster's, and a
flexible shape's size), --public-ip (civo).

Examples:
  kpool nodepool create web --cluster $AKS_CLUSTER_ID --machine-type Standard_D4s_v5 --count 3 --zones 1,2,3
  kpool nodepool create batch --cluster $OKE_CLUSTER_ID --machine-type VM.Standard.E4.Flex --ocpus 2 --memory-gb 16 --count 2
  kpool nodepool create edge --cluster $CIVO_CLUSTER_ID --machine-type g4s.kube.medium --count 2 --public-ip

With -f FILE (YAML or JSON, the API's node pool body; - reads stdin) the
file's spec is the base and the flags given are merged over it, as a PUT
would: maps such as labels merge key by key, lists such as taints replace.`,
		Args: nameArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := wf.check(fs, dryRun); err != nil {
				return err
			}
			var body api.NodePoolBody
			if file != "" {
				if err := decodePoolFile(cmd, file, &body); err != nil {
					return err
				}
			}
			if len(args) == 1 {
				body.Name = &args[0]
			}
			if body.Name == nil || *body.Name == "" {
				return errors.New("give the node pool's NAME (or a name in -f FILE)")
			}
			if fs.Changed("cluster") {
				body.ClusterID = &cluster
			}
			if body.ClusterID == nil || *body.ClusterID == "" {
				return errors.New("--cluster is required: the ID of the node pool's cluster")
			}
			if fs.Changed("id") {
				body.ID = id
			}
			c := f.writer(cmd)
			var tgt poolTarget
			if anyChanged(fs, platformFlags...) {
				cl, err := c.Cluster(cmd.Context(), *body.ClusterID)
				if err != nil {
					return err
				}
				tgt = targetOf(cl)
			}
			spec, err := pf.spec(fs, tgt)
			if err != nil {
				return err
			}
			if body.Spec, err = mergeSpec(body.Spec, spec); err != nil {
				return err
			}
			if len(body.Spec) == 0 {
				body.Spec = json.RawMessage("{}") // the server names what is missing
			}
			if perZone {
				if dryRun {
					return errors.New("--per-zone takes no --dry-run: check one member with nodepool create --dry-run")
				}
				return f.createPerZone(cmd, c, wf, body)
			}
			if dryRun {
				return f.dryRunCreate(cmd, c, body)
			}
			p, err := c.CreateNodePool(cmd.Context(), body)
			if err != nil {
				return err
			}
			return f.waitAndPrint(cmd, c, wf, p)
		},
	}
	fs := cmd.Flags()
	dryRunFlag(fs, &dryRun)
	fs.BoolVar(&perZone, "per-zone", false, "one pool per zone of --zones (NAME-ZONE), all in logical pool NAME (their nodes' kompox.dev/node-pool), created together: the zonal pattern")
	fs.StringVarP(&file, "filename", "f", "", "YAML or JSON file of the node pool; - reads stdin")
	fs.StringVar(&cluster, "cluster", "", "the cluster (name or ID)")
	fs.StringVar(&id, "id", "", "node pool ID (a UUID) to use instead of a generated one")
	pf.register(fs)
	wf.register(fs, "is Ready")
	return cmd
}

func newPoolList(f *clientFlags) *cobra.Command {
	var (
		l                      listFlags
		cluster, phase, health string
		watch                  bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List node pools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := f.client()
			o := l.options()
			o.ClusterID, o.Phase, o.Health = cluster, kpool.Phase(phase), kpool.Health(health)
			show := func() error {
				var list *api.NodePoolList
				err := pages(l.all, o, func(o kpool.ListOptions) (string, error) {
					page, err := c.NodePools(cmd.Context(), o)
					if err != nil {
						return "", err
					}
					if list == nil {
						list = page
					} else {
						list.NodePools = append(list.NodePools, page.NodePools...)
					}
					list.Next = page.Next
					return page.Next, nil
				})
				if err != nil {
					return err
				}
				if f.table() && len(list.NodePools) == 0 && !watch {
					fmt.Fprintln(cmd.ErrOrStderr(), "No node pools found.")
					return nil
				}
				l.more(cmd, len(list.NodePools), list.Total, list.Next)
				return f.print(cmd, list, func(w io.Writer) { poolTable(w, list.NodePools, f.wide(), f.clock.Now()) })
			}
			if watch {
				// The stream first, then the list: no change is missed.
				return f.watchPools(cmd, nil, o.ClusterID, show)
			}
			return show()
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cluster, "cluster", "", "only the pools of this cluster (name or ID)")
	fs.BoolVarP(&watch, "watch", "w", false, "after the list, print a line for each pool that changes (the server's live feed), until Ctrl-C")
	fs.StringVar(&phase, "status", "", "only pools in this phase: Pending, Provisioning, Ready, Updating, Degraded, Failed or Deleting")
	fs.StringVar(&health, "health", "", "only pools of this health: healthy, unhealthy or unknown")
	l.register(fs)
	return cmd
}

func newPoolGet(f *clientFlags) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a node pool",
		Example: `  kpool nodepool get web --cluster prod
  kpool nodepool get 0b1f4c2e-0000-4000-8000-000000000001 -o yaml
  kpool nodepool get web -w          # a line each time it changes, until it is deleted`,
		Args: idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				return f.watchPools(cmd, []string{args[0]}, "", func() error {
					p, err := f.client().NodePool(cmd.Context(), args[0])
					if err != nil {
						return err
					}
					return f.print(cmd, p, func(w io.Writer) { poolTable(w, []*kpool.NodePool{p}, f.wide(), f.clock.Now()) })
				})
			}
			p, err := f.client().NodePool(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return f.print(cmd, p, func(w io.Writer) { poolView(w, p, f.clock.Now()) })
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after showing it, print a line each time it changes (the server's live feed), until it is deleted or Ctrl-C")
	return cmd
}

// poolFile is a node pool file: the API's body, plus the read-only fields
// of a get's output that the body does not list, so that the output of get
// is a valid file. They are not sent.
type poolFile struct {
	api.NodePoolBody
	ProviderName json.RawMessage `json:"provider_name,omitempty"`
}

// decodePoolFile reads a node pool file (see poolFile) into body.
func decodePoolFile(cmd *cobra.Command, name string, body *api.NodePoolBody) error {
	var pf poolFile
	if err := decodeFile(cmd, name, &pf); err != nil {
		return err
	}
	*body = pf.NodePoolBody
	return nil
}

// poolTargetOf returns what the flags need to know of an existing pool: its
// platform type and, with region, its cluster's region.
func poolTargetOf(ctx context.Context, c *api.Client, id string, region bool) (poolTarget, error) {
	p, err := c.NodePool(ctx, id)
	if err != nil {
		return poolTarget{}, err
	}
	tgt := poolTarget{t: p.Spec.Platform.Type}
	if tgt.t != "" && !region {
		return tgt, nil
	}
	cl, err := c.Cluster(ctx, p.ClusterID)
	if err != nil {
		return poolTarget{}, err
	}
	return targetOf(cl), nil
}

// dryRunFlag registers --dry-run.
func dryRunFlag(fs *pflag.FlagSet, v *bool) {
	fs.BoolVar(v, "dry-run", false, "show what the change would do at the provider (the plan), changing nothing")
}

// printDryRun shows a dry run's plan as a table, or the whole answer with
// -o json or yaml.
//
// A plan with replace or not_implemented rows is shown as any other (a dry
// run is for seeing them, with their reasons), followed by a line saying
// that the change itself would be refused, and why.
func (f *clientFlags) printDryRun(cmd *cobra.Command, d *api.DryRun) error {
	return f.print(cmd, d, func(w io.Writer) {
		planView(w, d.Plan)
		if r := d.Refused; r != nil {
			why := "the rows marked replace need a new pool: create one with the new values, move the workloads, then delete this one"
			if r.Code == kpool.CodeNotImplemented {
				why = "the provider cannot make the rows marked not_implemented at all"
			}
			fmt.Fprintf(w, "Without --dry-run this change is refused (%s): %s.\n", r.Code, why)
		}
	})
}

func newPoolUpdate(f *clientFlags) *cobra.Command {
	var (
		pf       poolFlags
		wf       waitFlags
		file, rv string
		patch    bool
		dryRun   bool
	)
	cmd := &cobra.Command{
		Use:   "update ID [flags] | update ID -f FILE [--patch] [flags]",
		Short: "Change a node pool's spec",
		Long: `Change a node pool's spec.

With flags, a PUT sends only the fields given; the server keeps the rest.
--taint replaces the pool's taints; --label and --tag add or change keys.
With -f FILE the file (YAML or JSON, such as the output of get -o yaml) is
the body; flags given are merged over its spec. --patch sends it as a JSON
merge patch (PATCH), in which null removes a field.
--resource-version makes the change conditional: it fails with CONFLICT if
the pool has changed since.

--zones takes logical zones (1,2,3 or <region>-1,…), sent as the
provider-neutral spec.zones, or the provider's own zone names, sent in the
platform's field; either replaces the pool's zones.

The server checks the change against what the pool's provider can do: one
the provider makes only with a new pool (such as an AKS pool's vmSize) fails
with VALIDATION_ERROR naming the field, one it cannot do at all with
NOT_IMPLEMENTED. --dry-run shows the plan, each changed field and what the
provider does about it (in place, rolling the nodes, or for new nodes only),
and changes nothing.`,
		Args: idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := wf.check(fs, dryRun); err != nil {
				return err
			}
			id := args[0]
			var body api.NodePoolBody
			switch {
			case file != "":
				if err := decodePoolFile(cmd, file, &body); err != nil {
					return err
				}
				if body.ID != "" && body.ID != id {
					return fmt.Errorf("the file is node pool %s, not %s", body.ID, id)
				}
			case patch:
				return errors.New("--patch sends -f FILE as a merge patch: give -f FILE")
			case !anyChanged(fs, specFlags...):
				return errors.New("nothing to update: give flags such as --count or --machine-type, or -f FILE")
			}
			c := f.writer(cmd)
			var tgt poolTarget
			if anyChanged(fs, platformFlags...) {
				var err error
				if tgt, err = poolTargetOf(cmd.Context(), c, id, fs.Changed("zones")); err != nil {
					return err
				}
			}
			spec, err := pf.spec(fs, tgt)
			if err != nil {
				return err
			}
			if body.Spec, err = mergeSpec(body.Spec, spec); err != nil {
				return err
			}
			if fs.Changed("resource-version") {
				body.ResourceVersion = rv
			}
			if dryRun {
				d, err := c.DryRunNodePool(cmd.Context(), id, body, patch)
				if err != nil {
					return err
				}
				return f.printDryRun(cmd, d)
			}
			p, err := c.UpdateNodePool(cmd.Context(), id, body, patch)
			if err != nil {
				return err
			}
			return f.waitAndPrint(cmd, c, wf, p)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&file, "filename", "f", "", "YAML or JSON file of the node pool; - reads stdin")
	fs.BoolVar(&patch, "patch", false, "send -f FILE as a JSON merge patch (PATCH) instead of a PUT")
	fs.StringVar(&rv, "resource-version", "", "change only if the pool is still at this resource version")
	dryRunFlag(fs, &dryRun)
	pf.register(fs)
	wf.register(fs, "is Ready with the change")
	return cmd
}

func newPoolScale(f *clientFlags) *cobra.Command {
	var (
		count, min, max int
		rv              string
		dryRun          bool
		wf              waitFlags
	)
	cmd := &cobra.Command{
		Use:   "scale ID --count N | --min N --max N",
		Short: "Change a node pool's node count or autoscaling bounds",
		Args:  idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := wf.check(fs, dryRun); err != nil {
				return err
			}
			if !anyChanged(fs, "count", "min", "max") {
				return errors.New("give --count N, or --min N and --max N to change the autoscaling bounds")
			}
			spec := map[string]any{}
			if fs.Changed("count") {
				spec["nodeCount"] = count
			}
			if a := bounds(fs, min, max); a != nil {
				spec["autoscaling"] = a
			}
			raw, err := json.Marshal(spec)
			if err != nil {
				return err
			}
			body := api.NodePoolBody{Spec: raw, ResourceVersion: rv}
			if dryRun {
				d, err := f.client().DryRunNodePool(cmd.Context(), args[0], body, false)
				if err != nil {
					return err
				}
				return f.printDryRun(cmd, d)
			}
			c := f.writer(cmd)
			p, err := c.UpdateNodePool(cmd.Context(), args[0], body, false)
			if err != nil {
				return err
			}
			return f.waitAndPrint(cmd, c, wf, p)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&count, "count", 0, "number of nodes")
	registerBounds(fs, &min, &max)
	fs.StringVar(&rv, "resource-version", "", "change only if the pool is still at this resource version")
	dryRunFlag(fs, &dryRun)
	wf.register(fs, "is Ready at its new size")
	return cmd
}

func newPoolDelete(f *clientFlags) *cobra.Command {
	var (
		wf            waitFlags
		dryRun, force bool
	)
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a node pool",
		Long: `Delete a node pool. A pool that a controller has reported on stays, in phase
Deleting, until its controllers have removed it at the provider (or, with
deletionPolicy Abandon, let it be); --wait waits until then. An admin may
remove a pool's record at once with --force (a pool that can never be
deleted at its provider): the pool there is left as it is.`,
		Args: idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := wf.check(cmd.Flags(), dryRun); err != nil {
				return err
			}
			id := args[0]
			c := f.client()
			if dryRun {
				return f.dryRunDelete(cmd, c, id)
			}
			if force {
				if err := c.ForceDeleteNodePool(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "nodepool %s removed from kpool; the pool at the provider is left as it is\n", id)
				return nil
			}
			p, gone, err := c.DeleteNodePool(cmd.Context(), id)
			if err != nil {
				return err
			}
			if !gone && wf.wait {
				if _, err := newWaiter(cmd, c, f.clock.Tick, p, true).run(cmd.Context(), wf.timeout); err != nil {
					return err
				}
				gone = true
			}
			out := cmd.OutOrStdout()
			switch {
			case gone:
				fmt.Fprintf(out, "nodepool %s deleted\n", id)
			case !f.table():
				return f.print(cmd, p, nil)
			default:
				fmt.Fprintf(out, "nodepool %s is being deleted (%s)\n", id, p.Status.Message)
			}
			return nil
		},
	}
	dryRunFlag(cmd.Flags(), &dryRun)
	cmd.Flags().BoolVar(&force, "force", false, "admins: remove the pool's record at once, leaving the pool at its provider as it is")
	wf.register(cmd.Flags(), "is gone")
	return cmd
}

func newPoolStatus(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status ID",
		Short: "Show a node pool's status and each controller's report",
		Args:  idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := f.client().NodePoolStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return f.print(cmd, d, func(w io.Writer) { statusView(w, d, f.clock.Now()) })
		},
	}
}
