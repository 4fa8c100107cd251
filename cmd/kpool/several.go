package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// get and delete take several names or IDs, as kubectl's do (so that
// kpool nodepool list -o name | xargs kpool nodepool get works). Each is
// resolved and acted on by itself: one that fails is reported and the
// others still go; the command then exits 1.

// namesArg accepts one or more non-empty names or IDs of kind.
func namesArg(kind string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%s: give the %s's NAME or ID (or several)", cmd.CommandPath(), kind)
		}
		for i, a := range args {
			if strings.TrimSpace(a) == "" {
				return fmt.Errorf("%s: argument %d: the %s's NAME or ID must not be empty", cmd.CommandPath(), i+1, kind)
			}
		}
		return nil
	}
}

// asker is the question delete asks before deleting the object id (see
// confirm), such as "Delete node pool web in cluster prod (3 nodes)?".
type asker func(cmd *cobra.Command, c *api.Client, id string) (string, error)

// byNames is byName for a get or delete of several node pools or clusters:
// each argument is resolved to its ID (a pool's name in --cluster, or the
// context's cluster), then, with ask, confirmed on a terminal, then run.
func byNames(f *clientFlags, cmd *cobra.Command, kind string, ask asker) *cobra.Command {
	var cluster string
	if kind == "node pool" {
		cmd.Flags().StringVar(&cluster, "cluster", "", "the pools' cluster (name or ID), to find a pool by its name")
	}
	if ask != nil {
		cmd.Flags().BoolP("yes", "y", false, "delete without asking (it asks only when stdin and stdout are a terminal)")
	}
	cmd.Use = strings.Replace(cmd.Use, " ID", " NAME|ID...", 1)
	cmd.Args = namesArg(kind)
	inner := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if fl := c.Flags().Lookup("watch"); fl != nil && fl.Value.String() == "true" && len(args) > 1 {
			return fmt.Errorf("-w follows one %s: give one NAME or ID", kind)
		}
		n := 0
		return f.gather(c, listKey(kind), len(args), func() error {
			return eachName(c, args, func(arg string) error {
				id, err := resolve(c.Context(), f, kind, cluster, arg)
				if err != nil {
					return err
				}
				if ask != nil {
					if err := confirm(c, func() (string, error) { return ask(c, f.client(), id) }); err != nil {
						return err
					}
				}
				if n++; n > 1 && c.Name() == "get" {
					f.separate(c.OutOrStdout())
				}
				return inner(c, []string{id})
			})
		})
	}
	return cmd
}

// listKey is the member of the list document that holds objects of kind,
// as kpool's list commands print it.
func listKey(kind string) string {
	switch kind {
	case "node pool":
		return "nodepools"
	case "logical pool":
		return "logicalpools"
	}
	return "clusters"
}

// gather runs a get of n names so that, with -o json or yaml and more than
// one name, the objects print as one list document ({"nodepools": [...]},
// the shape of kpool nodepool list -o json, which kpool apply -f reads),
// as kubectl prints a List, rather than one document after another.
func (f *clientFlags) gather(cmd *cobra.Command, key string, n int, run func() error) error {
	if n < 2 || cmd.Name() != "get" || (f.output != outJSON && f.output != outYAML) {
		return run()
	}
	items := []any{}
	f.collected = &items
	err := run()
	f.collected = nil
	if len(items) > 0 || err == nil {
		if perr := f.print(cmd, map[string]any{key: items, "total": len(items)}, nil); perr != nil {
			return perr
		}
	}
	return err
}

// resolve is the ID of a node pool (in cluster, or the context's cluster)
// or a cluster that ref names by its name or ID.
func resolve(ctx context.Context, f *clientFlags, kind, cluster, ref string) (string, error) {
	if kind != "node pool" {
		return f.client().ClusterID(ctx, ref)
	}
	if cluster == "" {
		cluster = f.defaultCluster
	}
	return f.client().NodePoolID(ctx, ref, cluster)
}

// separate writes what goes between two objects a get prints: a YAML
// document separator, or a blank line between tables; nothing while a
// get gathers its objects into one list.
func (f *clientFlags) separate(w io.Writer) {
	switch {
	case f.collected != nil:
	case f.output == outYAML:
		fmt.Fprintln(w, "---")
	case f.table() && f.output != outName:
		fmt.Fprintln(w)
	}
}

// eachName runs fn for each name. With one name its error is the
// command's; with several, each error is printed on stderr as it comes
// (as kubectl does) and the command exits with the highest code.
func eachName(cmd *cobra.Command, names []string, fn func(name string) error) error {
	if len(names) == 1 {
		return fn(names[0])
	}
	worst := 0
	for _, n := range names {
		if err := fn(n); err != nil {
			worst = max(worst, exitCode(err, cmd.ErrOrStderr()))
		}
	}
	if worst > 0 {
		return quietExit(worst)
	}
	return nil
}

// confirm asks question (made only when asked) on stderr and reads the
// answer from stdin, when both stdin and stdout are a terminal and neither
// --yes nor --dry-run was given; scripts are never asked. Anything but y or
// yes is a no: an error saying nothing was deleted.
func confirm(cmd *cobra.Command, question func() (string, error)) error {
	for _, name := range []string{"yes", "dry-run"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Value.String() == "true" {
			return nil
		}
	}
	if !isTerminal(cmd.InOrStdin()) || !isTerminal(cmd.OutOrStdout()) {
		return nil
	}
	q, err := question()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N] ", q)
	answer, err := readLine(cmd.InOrStdin())
	if err != nil && answer == "" && !errors.Is(err, io.EOF) {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	if errors.Is(err, io.EOF) {
		fmt.Fprintln(cmd.ErrOrStderr())
	}
	what := strings.TrimSuffix(strings.TrimPrefix(q, "Delete "), "?")
	return fmt.Errorf("%s: nothing deleted, as the answer was not y (--yes deletes without asking)", what)
}

// readLine reads up to a newline one byte at a time, so that the answers
// to several questions can be read from one stdin.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// clusterName is the name of cluster id, or the id when it cannot be read.
func clusterName(ctx context.Context, c *api.Client, id string) string {
	if cl, err := c.Cluster(ctx, id); err == nil && cl.Name != "" {
		return cl.Name
	}
	return id
}

// poolTitle names a pool as a person reads it: "node pool web in cluster
// prod".
func poolTitle(ctx context.Context, c *api.Client, p *kpool.NodePool) string {
	return fmt.Sprintf("node pool %s in cluster %s", p.Name, clusterName(ctx, c, p.ClusterID))
}

// askPoolDelete is nodepool delete's question: "Delete node pool web in
// cluster prod (3 nodes)?".
func askPoolDelete(cmd *cobra.Command, c *api.Client, id string) (string, error) {
	p, err := c.NodePool(cmd.Context(), id)
	if err != nil {
		return "", err
	}
	n := p.Spec.Count()
	if p.Status.Nodes != nil {
		n = p.Status.Nodes.Total
	}
	return fmt.Sprintf("Delete %s (%s)?", poolTitle(cmd.Context(), c, p), plural(n, "node")), nil
}

// askClusterDelete is cluster delete's question: what goes with --force,
// and that the cluster itself stays.
func askClusterDelete(cmd *cobra.Command, c *api.Client, id string) (string, error) {
	cl, err := c.Cluster(cmd.Context(), id)
	if err != nil {
		return "", err
	}
	if force, _ := cmd.Flags().GetBool("force"); force {
		n := "its node pools"
		if l, err := c.NodePools(cmd.Context(), service.ListOptions{ClusterID: cl.ID, Limit: 1}); err == nil {
			n = "its " + plural(l.Total, "node pool")
		}
		return fmt.Sprintf("Delete cluster %s and %s?", cl.Name, n), nil
	}
	return fmt.Sprintf("Delete cluster %s from kpool (the Kubernetes cluster itself stays)?", cl.Name), nil
}

// plural is "1 node" or "3 nodes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// logicalByNames lets a logicalpool get or delete (with ask) take several
// names in its --cluster, as byNames does for node pools.
func logicalByNames(f *clientFlags, cmd *cobra.Command, ask asker) *cobra.Command {
	if ask != nil {
		cmd.Flags().BoolP("yes", "y", false, "delete without asking (it asks only when stdin and stdout are a terminal)")
	}
	cmd.Use = strings.Replace(cmd.Use, " NAME", " NAME...", 1)
	cmd.Args = namesArg("logical pool")
	inner := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		n := 0
		return f.gather(c, listKey("logical pool"), len(args), func() error {
			return eachName(c, args, func(name string) error {
				if ask != nil {
					if err := confirm(c, func() (string, error) { return ask(c, f.client(), name) }); err != nil {
						return err
					}
				}
				if n++; n > 1 && c.Name() == "get" {
					f.separate(c.OutOrStdout())
				}
				return inner(c, []string{name})
			})
		})
	}
	return cmd
}

// askLogicalDelete is logicalpool delete's question, with the member pools
// that go with it.
func askLogicalDelete(cmd *cobra.Command, c *api.Client, name string) (string, error) {
	cluster, err := clusterOf(cmd)
	if err != nil {
		return "", err
	}
	lp, err := c.LogicalPool(cmd.Context(), cluster, name)
	if err != nil {
		return "", err
	}
	made := 0
	for _, m := range lp.Status.Members {
		if m.Made {
			made++
		}
	}
	return fmt.Sprintf("Delete logical pool %s in cluster %s and the %s it made?", lp.Name, clusterName(cmd.Context(), c, lp.ClusterID),
		plural(made, "member pool")), nil
}
