package main

import (
	"encoding/json"
	"fmt"
	"io"

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
		getOrList(f, byNames(f, newPoolGet(f), "node pool", nil)), byName(f, newPoolUpdate(f), "node pool"), byName(f, newPoolScale(f), "node pool"),
		byNames(f, newPoolDelete(f), "node pool", askPoolDelete), byName(f, newPoolStatus(f), "node pool"), byName(f, newPoolNodes(f), "node pool"),
		byName(f, newPoolRollback(f), "node pool"))
	return cmd
}

func newPoolGet(f *clientFlags) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a node pool",
		Example: `  kpool nodepool get web --cluster prod
  kpool nodepool get 0b1f4c2e-0000-4000-8000-000000000001 -o yaml
  kpool nodepool get web -w          # a line each time it changes, until it is deleted
  kpool nodepool list -o name | xargs kpool nodepool get`,
		Args: idArg("node pool"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				return f.watchPools(cmd, []string{args[0]}, "", func() error {
					p, err := f.client().NodePool(cmd.Context(), args[0])
					if err != nil {
						return err
					}
					return f.print(cmd, p, f.pools(cmd, p))
				})
			}
			p, err := f.client().NodePool(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			cloud := -1
			if p.Status.Nodes != nil && f.table() {
				if cloud, err = cloudNodes(cmd, f.client(), p.ID); err != nil {
					return err
				}
			}
			return f.print(cmd, p, func(w io.Writer) { poolView(w, p, f.names(cmd), cloud, f.clock.Now()) })
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
			why := "the rows marked replace need a new pool: give --replacement Surge to have kpool replace it" +
				" (a successor pool is created, the old nodes drained onto it, the old pool deleted), or create one" +
				" with the new values, move the workloads, then delete this one"
			if r.Code == kpool.CodeNotImplemented {
				why = "the provider cannot make the rows marked not_implemented at all"
			}
			fmt.Fprintf(w, "Without --dry-run this change is refused (%s): %s.\n", r.Code, why)
		}
	})
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
			raw, err := scaleSpec(fs, &count, &min, &max)
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
		Short: "Delete node pools (asking first on a terminal; --yes does not ask)",
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
			// Named in what it prints as a person reads it, not by its ID.
			title := "node pool " + id
			if before, err := c.NodePool(cmd.Context(), id); err == nil {
				title = poolTitle(cmd.Context(), c, before)
			}
			if force {
				if err := c.ForceDeleteNodePool(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s removed from kpool; the pool at the provider is left as it is\n", title)
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
				fmt.Fprintf(out, "%s deleted\n", title)
			case !f.table():
				return f.print(cmd, p, nil)
			default:
				fmt.Fprintf(out, "%s is being deleted (%s)\n", title, p.Status.Message)
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
			return f.print(cmd, d, func(w io.Writer) { statusView(w, d, f.names(cmd), f.clock.Now()) })
		},
	}
}
