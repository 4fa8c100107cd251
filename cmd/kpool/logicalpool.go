package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/poolspec"
	"github.com/kpool/kpool/service"
)

const logicalPoolCreateLong = `Create a logical pool: a name apps select (kompox.dev/node-pool), a node
count (or --min/--max bounds) kept over member pools kpool makes, one per
zone, and fallbacks taken in order when an offering (a zone's machine
type, spot) runs out of capacity.

The member flags are those of nodepool create: --machine-type goes into
the cluster platform's own field, --zones takes logical zones.
--fallback-machine-types A,B adds the fallbacks {machineType: A} and
{machineType: B}, in that order; --fallback-on-demand (with --spot) adds
{spot: false} last. --dry-run prints the members it would make and the
fallback order, creating nothing.`

const logicalPoolCreateExample = `  # Six nodes over zones 1-3, D4as_v5 where D4s_v5 runs out; see the plan first
  kpool logicalpool create web --cluster aks-1 --machine-type Standard_D4s_v5 --zones 1,2,3 --count 6 \
      --fallback-machine-types Standard_D4as_v5 --dry-run

  # Spot nodes with bounds, on-demand when spot runs out
  kpool logicalpool create batch --cluster gke-1 --machine-type n2-standard-4 --zones 1,2 --min 2 --max 10 --spot --fallback-on-demand`

// newLogicalPoolCmd is kpool logicalpool (lp): logical pools of a cluster,
// named by their names within it.
func newLogicalPoolCmd(clk clock) *cobra.Command {
	f := &clientFlags{clock: clk}
	cmd := &cobra.Command{
		Use:     "logicalpool",
		Aliases: []string{"logicalpools", "lp"},
		Short:   "Create, list, show, scale and delete logical pools",
		Example: "  kpool logicalpool list --cluster aks-1\n  kpool logicalpool get web --cluster aks-1",
		RunE:    groupRun,
	}
	f.register(cmd)
	for _, sub := range []*cobra.Command{newLogicalCreate(f), logicalByNames(f, newLogicalGet(f), nil), newLogicalList(f), newLogicalScale(f),
		logicalByNames(f, newLogicalDelete(f), askLogicalDelete)} {
		if sub.Args == nil {
			sub.Args = nameArgOf("logical pool")
		}
		sub.Flags().StringVar(new(string), "cluster", "", "the logical pool's cluster (name or ID; default: the context's)")
		if sub.Name() != "list" {
			sub.ValidArgsFunction = completeLogicalPools
		}
		cmd.AddCommand(clusterFlagByName(defaultClusterFlag(f, sub), f.client))
	}
	return cmd
}

// nameArgOf accepts exactly one NAME.
func nameArgOf(kind string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 || args[0] == "" {
			return fmt.Errorf("%s: give the %s's NAME", cmd.CommandPath(), kind)
		}
		return nil
	}
}

// clusterOf is the --cluster given (an id once the hooks ran), or an
// error saying it is needed.
func clusterOf(cmd *cobra.Command) (string, error) {
	id, _ := cmd.Flags().GetString("cluster")
	if id == "" {
		return "", errors.New("--cluster is required: the logical pool's cluster (name or ID), or a context with a cluster")
	}
	return id, nil
}

// logicalCreate is logicalpool create's flags.
type logicalCreate struct {
	f                *clientFlags
	pool             poolFlags
	fallbackTypes    []string
	onDemand, dryRun bool
}

func newLogicalCreate(f *clientFlags) *cobra.Command {
	o := &logicalCreate{f: f}
	cmd := &cobra.Command{
		Use:     "create NAME --cluster C --machine-type M [--zones 1,2,3] --count N | --min N --max N [flags]",
		Short:   "Create a logical pool",
		Long:    logicalPoolCreateLong,
		Example: logicalPoolCreateExample,
		RunE:    o.run,
	}
	fs := cmd.Flags()
	o.pool.register(fs)
	fs.StringSliceVar(&o.fallbackTypes, "fallback-machine-types", nil, "fallback machine types, in order (comma-separated): each the template with that machine type")
	fs.BoolVar(&o.onDemand, "fallback-on-demand", false, "with --spot: fall back to on-demand nodes last")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the members it would make and the fallback order, creating nothing")
	_ = cmd.RegisterFlagCompletionFunc("fallback-machine-types", completeMachineTypeList)
	return cmd
}

func (o *logicalCreate) run(cmd *cobra.Command, args []string) error {
	cluster, err := clusterOf(cmd)
	if err != nil {
		return err
	}
	raw, err := o.spec(cmd, cluster)
	if err != nil {
		return err
	}
	c := o.f.writer(cmd)
	body := api.LogicalPoolBody{Name: &args[0], Spec: raw}
	if o.dryRun {
		d, err := c.DryRunCreateLogicalPool(cmd.Context(), cluster, body)
		if err != nil {
			return err
		}
		cl, err := c.Cluster(cmd.Context(), cluster)
		if err != nil {
			return err
		}
		return o.f.print(cmd, d, func(w io.Writer) { logicalPlanView(w, d.LogicalPool, cl) })
	}
	lp, err := c.CreateLogicalPool(cmd.Context(), cluster, body)
	if err != nil {
		return err
	}
	return o.f.print(cmd, lp, func(w io.Writer) { logicalTable(w, []*kpool.LogicalPool{lp}) })
}

// spec is the logical pool's spec from the flags: the count or bounds at
// the top, the member flags made into the template as nodepool create
// makes a pool's spec (the platform's own fields), then the fallbacks.
func (o *logicalCreate) spec(cmd *cobra.Command, cluster string) (json.RawMessage, error) {
	fs := cmd.Flags()
	if o.onDemand && !o.pool.spot {
		return nil, errors.New("--fallback-on-demand falls back from spot nodes: give --spot too")
	}
	if !anyChanged(fs, "count", "min", "max") {
		return nil, errors.New("give --count N (the total over the members), or --min N and --max N")
	}
	s := o.pool.settings(fs)
	top := poolspec.Settings{NodeCount: s.NodeCount, MinNodes: s.MinNodes, MaxNodes: s.MaxNodes}
	s.NodeCount, s.MinNodes, s.MaxNodes = nil, nil, nil
	spec, err := specs.Spec(&top, poolspec.Target{})
	if err != nil {
		return nil, err
	}
	tmpl, err := specs.ForCluster(cmd.Context(), o.f.client(), cluster, s)
	if err != nil {
		return nil, err
	}
	spec["template"] = tmpl
	var fallbacks []kpool.Fallback
	for _, mt := range o.fallbackTypes {
		fallbacks = append(fallbacks, kpool.Fallback{MachineType: mt})
	}
	if o.onDemand {
		fallbacks = append(fallbacks, kpool.Fallback{Spot: new(bool)})
	}
	if len(fallbacks) > 0 {
		spec["fallbacks"] = fallbacks
	}
	return json.Marshal(spec)
}

func newLogicalGet(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "get NAME --cluster C",
		Short:   "Show a logical pool: its members and the offerings that ran out",
		Example: "  kpool logicalpool get web --cluster aks-1\n  kpool logicalpool get web --cluster aks-1 -o yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			cluster, err := clusterOf(cmd)
			if err != nil {
				return err
			}
			c := f.client()
			lp, err := c.LogicalPool(cmd.Context(), cluster, args[0])
			if err != nil {
				return err
			}
			name := lp.ClusterID
			if f.table() {
				cl, err := c.Cluster(cmd.Context(), lp.ClusterID)
				if err != nil {
					return err
				}
				name = cl.Name
			}
			return f.print(cmd, lp, func(w io.Writer) { logicalView(w, lp, name, f.clock.Now()) })
		},
	}
}

func newLogicalList(f *clientFlags) *cobra.Command {
	var (
		l        listFlags
		selector string
	)
	cmd := &cobra.Command{
		Use:     "list --cluster C",
		Short:   "List a cluster's logical pools",
		Example: "  kpool logicalpool list --cluster aks-1\n  kpool logicalpool list --cluster aks-1 -l team=web\n  kpool logicalpool list --cluster aks-1 -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sel, err := kpool.ParseSelector("--selector (-l)", selector)
			if err != nil {
				return err
			}
			cluster, err := clusterOf(cmd)
			if err != nil {
				return err
			}
			c := f.client()
			var list *api.LogicalPoolList
			opts := l.options()
			opts.Labels = sel
			err = pages(l.all, opts, func(o service.ListOptions) (string, error) {
				page, err := c.LogicalPools(cmd.Context(), cluster, o)
				if err != nil {
					return "", err
				}
				if list == nil {
					list = page
				} else {
					list.LogicalPools = append(list.LogicalPools, page.LogicalPools...)
				}
				list.Next = page.Next
				return page.Next, nil
			})
			if err != nil {
				return err
			}
			if len(sel) > 0 {
				keepLabelled(list, sel, l.all)
			}
			if f.table() && len(list.LogicalPools) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "No logical pools found.")
				return nil
			}
			l.more(cmd, len(list.LogicalPools), list.Total, list.Next)
			return f.print(cmd, list, func(w io.Writer) { logicalTable(w, list.LogicalPools) })
		},
	}
	l.register(cmd.Flags())
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "only logical pools whose template's labels match this selector, kubectl's syntax: team=web,tier!=db")
	return cmd
}
