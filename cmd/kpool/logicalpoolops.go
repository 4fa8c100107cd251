package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

func newLogicalScale(f *clientFlags) *cobra.Command {
	var (
		count, min, max int
		rv              string
		wf              waitFlags
	)
	cmd := &cobra.Command{
		Use:   "scale NAME --count N | --min N --max N [--wait]",
		Short: "Change a logical pool's node count or autoscaling bounds",
		Example: `  kpool logicalpool scale web --cluster aks-1 --count 9 --wait
  kpool logicalpool scale batch --cluster gke-1 --min 0 --max 20`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			cluster, err := clusterOf(cmd)
			if err == nil {
				err = wf.check(fs, false)
			}
			if err != nil {
				return err
			}
			raw, err := scaleSpec(fs, &count, &min, &max)
			if err != nil {
				return err
			}
			c := f.writer(cmd)
			lp, err := c.UpdateLogicalPool(cmd.Context(), cluster, args[0], api.LogicalPoolBody{Spec: raw, ResourceVersion: rv}, true)
			if err != nil {
				return err
			}
			if wf.wait {
				if lp, err = f.waitLogical(cmd, c, lp, wf.timeout); err != nil {
					return err
				}
			}
			return f.print(cmd, lp, func(w io.Writer) { logicalTable(w, []*kpool.LogicalPool{lp}) })
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&count, "count", 0, "total number of nodes over the members")
	registerBounds(fs, &min, &max)
	fs.StringVar(&rv, "resource-version", "", "change only if the logical pool is still at this resource version")
	wf.register(fs, "has as many Ready nodes as its count")
	return cmd
}

// waitLogical polls a logical pool until its controller has seen the write
// and its members have as many Ready nodes as it asks for, drawing its
// progress on one line of stderr. An interrupt stops the wait, not the
// change.
func (f *clientFlags) waitLogical(cmd *cobra.Command, c *api.Client, lp *kpool.LogicalPool, timeout time.Duration) (*kpool.LogicalPool, error) {
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	p := newProgress(cmd.ErrOrStderr())
	gen, name, cluster := lp.Generation, lp.Name, lp.ClusterID
	for {
		got, err := c.LogicalPool(ctx, cluster, name)
		switch {
		case err == nil:
			lp = got
			st := lp.Status
			p.show(fmt.Sprintf("logicalpool %s: %d/%d nodes Ready  %s", name, st.ReadyNodes, st.NodeCount, oneLine(st.Message)))
			if st.ObservedGeneration >= gen && st.ReadyNodes >= st.NodeCount {
				p.finish()
				return lp, nil
			}
		case ctx.Err() == nil && !transient(err):
			p.finish()
			return nil, err
		}
		if err := f.clock.Tick(ctx); err != nil {
			p.finish()
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, &exitError{code: exitTimeout, err: fmt.Errorf("logicalpool %s: not done within --timeout %s; the change goes on at the server", name, timeout)}
			}
			return nil, &exitError{code: exitTimeout, err: fmt.Errorf("stopped waiting for logicalpool %s: the change goes on at the server (kpool logicalpool get %s --cluster %s follows it)", name, name, cluster)}
		}
	}
}

// progress draws a line of progress: redrawn in place on a terminal, else
// written anew when it changes.
type progress struct {
	out   io.Writer
	tty   bool
	last  string
	width int
}

func newProgress(out io.Writer) *progress { return &progress{out: out, tty: isTerminal(out)} }

func (p *progress) show(line string) {
	line = strings.TrimSpace(line)
	if line == p.last {
		return
	}
	if p.tty {
		s := fit(line, columns(p.out)-1)
		pad := strings.Repeat(" ", max(0, p.width-len([]rune(s))))
		fmt.Fprintf(p.out, "\r%s%s", s, pad)
		p.width = len([]rune(s))
	} else {
		fmt.Fprintln(p.out, line)
	}
	p.last = line
}

func (p *progress) finish() {
	if p.tty && p.width > 0 {
		fmt.Fprintln(p.out)
		p.width = 0
	}
}

func newLogicalDelete(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME --cluster C",
		Short: "Delete a logical pool and the member pools it made",
		Long: `Delete a logical pool and the member pools it made; pools that joined it
through spec.placementPool are left as they are. The command says which
members it deletes.`,
		Example: "  kpool logicalpool delete web --cluster aks-1",
		RunE: func(cmd *cobra.Command, args []string) error {
			cluster, err := clusterOf(cmd)
			if err != nil {
				return err
			}
			c := f.writer(cmd)
			before, err := c.LogicalPool(cmd.Context(), cluster, args[0])
			if err != nil {
				return err
			}
			lp, gone, err := c.DeleteLogicalPool(cmd.Context(), cluster, args[0])
			if err != nil {
				return err
			}
			if !f.table() && lp != nil {
				return f.print(cmd, lp, nil)
			}
			out := cmd.OutOrStdout()
			var made, kept []string
			for _, m := range before.Status.Members {
				if m.Made {
					made = append(made, m.Name)
				} else {
					kept = append(kept, m.Name)
				}
			}
			if len(made) > 0 {
				fmt.Fprintf(out, "deleting its members: %s\n", strings.Join(made, ", "))
			}
			if len(kept) > 0 {
				fmt.Fprintf(out, "left as they are (joined through spec.placementPool): %s\n", strings.Join(kept, ", "))
			}
			if gone {
				fmt.Fprintf(out, "logicalpool %s deleted; the members it made are Deleting (kpool nodepool list --cluster %s follows them)\n", args[0], cluster)
			} else {
				fmt.Fprintf(out, "logicalpool %s is being deleted with its members\n", args[0])
			}
			return nil
		},
	}
}

// completeLogicalPools completes a logical pool's name in the --cluster
// given, or the context's cluster.
func completeLogicalPools(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, cluster := completionClient(cmd)
	if fl := cmd.Flags().Lookup("cluster"); fl != nil && fl.Value.String() != "" {
		cluster = fl.Value.String()
	}
	if len(args) > 0 || c == nil || cluster == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	id, err := c.ClusterID(ctx, cluster)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	err = pages(true, service.ListOptions{Limit: kpool.MaxLimit}, func(o service.ListOptions) (string, error) {
		page, err := c.LogicalPools(ctx, id, o)
		if err != nil {
			return "", err
		}
		for _, lp := range page.LogicalPools {
			out = appendMatch(out, toComplete, lp.Name, fmt.Sprintf("logical pool of %s nodes, %d Ready", logicalCount(&lp.Spec), lp.Status.ReadyNodes))
		}
		return page.Next, nil
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeMachineTypeList completes the last machine type of a
// comma-separated list, as --machine-type completes one.
func completeMachineTypeList(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	got, dir := completeMachineTypes(cmd, args, last)
	for i, c := range got {
		got[i] = head + c
	}
	return got, dir
}
