package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// poolList is kpool nodepool list's flags.
type poolList struct {
	f                                *clientFlags
	l                                listFlags
	cluster, phase, health, selector string
	watch, allClusters               bool
}

func newPoolList(f *clientFlags) *cobra.Command {
	pl := &poolList{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List node pools",
		Long: `List node pools: those of --cluster, else of the context's cluster when it
names one (as kubectl's namespace), else of every cluster you see; -A lists
every cluster's even when the context names one.`,
		Example: `  kpool nodepool list
  kpool nodepool list --cluster prod -l team=web,tier!=db
  kpool nodepool list -A -o custom-columns=NAME:.name,NODES:.spec.nodeCount
  kpool nodepool list -w -l 'env in (prod,staging)'`,
		Args: cobra.NoArgs,
		RunE: pl.run,
	}
	fs := cmd.Flags()
	fs.StringVar(&pl.cluster, "cluster", "", "only the pools of this cluster (name or ID); default: the context's cluster")
	fs.BoolVarP(&pl.allClusters, "all-clusters", "A", false, "the pools of every cluster, even when the context names one")
	fs.StringVarP(&pl.selector, "selector", "l", "", "only pools whose labels match this selector, kubectl's syntax: team=web,tier!=db, 'env in (prod,staging)', gpu, '!spot'")
	fs.BoolVarP(&pl.watch, "watch", "w", false, "after the list, print a line for each pool that changes (the server's live feed), until Ctrl-C")
	fs.StringVar(&pl.phase, "status", "", "only pools in this phase: Pending, Provisioning, Ready, Updating, Degraded, Failed or Deleting")
	fs.StringVar(&pl.health, "health", "", "only pools of this health: healthy, unhealthy or unknown")
	pl.l.register(fs)
	return cmd
}

func (pl *poolList) run(cmd *cobra.Command, _ []string) error {
	f := pl.f
	sel, err := kpool.ParseSelector("--selector (-l)", pl.selector)
	if err != nil {
		return err
	}
	o := pl.l.options()
	o.ClusterID, o.Phase, o.Health, o.Labels = pl.cluster, kpool.Phase(pl.phase), kpool.Health(pl.health), sel
	scoped := ""
	switch {
	case pl.allClusters && cmd.Flags().Changed("cluster"):
		return errors.New("--all-clusters (-A) lists the pools of every cluster: leave out --cluster")
	case pl.cluster != "":
		if o.ClusterID, err = f.client().ClusterID(cmd.Context(), pl.cluster); err != nil {
			return err
		}
	case !pl.allClusters && f.defaultCluster != "":
		scoped = f.defaultCluster
		if o.ClusterID, err = f.client().ClusterID(cmd.Context(), scoped); err != nil {
			return err
		}
	}
	show := func() error {
		list, err := pl.fetch(cmd, o)
		if err != nil {
			return err
		}
		if f.table() && len(list.NodePools) == 0 && !pl.watch {
			if scoped != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "No node pools found in cluster %s (the context's; -A lists every cluster's).\n", scoped)
			} else {
				fmt.Fprintln(cmd.ErrOrStderr(), "No node pools found.")
			}
			return nil
		}
		pl.l.more(cmd, len(list.NodePools), list.Total, list.Next)
		return f.print(cmd, list, f.pools(cmd, list.NodePools...))
	}
	if pl.watch {
		// The stream first, then the list: no change is missed.
		return f.watchPoolsWhere(cmd, nil, o.ClusterID, sel, show)
	}
	return show()
}

// fetch reads the list, every page unless --limit or --offset asked for
// one, keeping the pools the selector matches: the server filters them by
// label_selector, and an older server, which does not, is filtered here.
func (pl *poolList) fetch(cmd *cobra.Command, o service.ListOptions) (*api.NodePoolList, error) {
	c := pl.f.client()
	var list *api.NodePoolList
	err := pages(pl.l.all, o, func(o service.ListOptions) (string, error) {
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
		return nil, err
	}
	if len(o.Labels) > 0 {
		list.NodePools = slices.DeleteFunc(list.NodePools, func(p *kpool.NodePool) bool { return !o.Labels.Matches(p.Spec.Labels) })
		if pl.l.all {
			list.Total = len(list.NodePools)
		}
	}
	return list, nil
}

// getOrList lets nodepool get, given no NAME, list pools as kubectl get
// does: those -l (--selector) matches, of --cluster or the context's
// cluster; -w watches them. With names, get is as it was, and -l is
// refused.
func getOrList(f *clientFlags, get *cobra.Command) *cobra.Command {
	pl := &poolList{f: f}
	pl.l.all = true
	get.Flags().StringVarP(&pl.selector, "selector", "l", "", "with no NAME: list the pools whose labels match this selector (kubectl's syntax: team=web,tier!=db)")
	args, pre, run := get.Args, get.PreRunE, get.RunE
	get.Use = strings.Replace(get.Use, "get ", "get [-l SELECTOR | ", 1) + "]"
	get.Args = func(c *cobra.Command, a []string) error {
		switch {
		case len(a) == 0:
			return nil
		case pl.selector != "":
			return fmt.Errorf("%s: -l (--selector) lists the pools it matches: give it or names, not both", c.CommandPath())
		case args != nil:
			return args(c, a)
		}
		return nil
	}
	get.PreRunE = func(c *cobra.Command, a []string) error {
		if len(a) == 0 || pre == nil {
			return nil
		}
		return pre(c, a)
	}
	get.RunE = func(c *cobra.Command, a []string) error {
		if len(a) > 0 {
			return run(c, a)
		}
		if fl := c.Flags().Lookup("cluster"); fl != nil {
			pl.cluster = fl.Value.String()
		}
		if fl := c.Flags().Lookup("watch"); fl != nil {
			pl.watch = fl.Value.String() == "true"
		}
		return pl.run(c, nil)
	}
	return get
}
