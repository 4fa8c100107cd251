package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/apply"
)

// dryRunCreate shows what nodepool create --dry-run would create: the pool
// as the server would store it (its defaults filled in), field by field,
// or the whole dry-run answer with -o json or yaml. Nothing is created.
func (f *clientFlags) dryRunCreate(cmd *cobra.Command, c *api.Client, body api.NodePoolBody) error {
	d, err := c.DryRunCreateNodePool(cmd.Context(), body)
	if err != nil {
		return err
	}
	return f.print(cmd, d, func(w io.Writer) {
		p := d.NodePool
		if p == nil {
			fmt.Fprintln(w, "The server would create the node pool.")
			return
		}
		fmt.Fprintf(w, "+ nodepool %s in cluster %s would be created (dry run: nothing changed)\n", p.Name, f.names(cmd).cluster(p.ClusterID))
		lines := apply.Fields("spec", p.Spec)
		for _, k := range sortedKeys(lines) {
			fmt.Fprintf(w, "    + %s = %s\n", k, lines[k])
		}
		if d.Plan != nil {
			for _, warn := range d.Plan.Warnings {
				fmt.Fprintf(w, "    warning: %s\n", oneLine(warn))
			}
		}
	})
}

// dryRunDelete shows what nodepool delete --dry-run would do: remove the
// pool at once, or mark it Deleting until its controllers have removed it
// at the provider. Nothing is deleted.
func (f *clientFlags) dryRunDelete(cmd *cobra.Command, c *api.Client, id string) error {
	d, err := c.DryRunDeleteNodePool(cmd.Context(), id)
	if err != nil {
		return err
	}
	return f.print(cmd, d, func(w io.Writer) {
		switch {
		case d.Gone:
			fmt.Fprintf(w, "- nodepool %s would be deleted at once: no controller has reported it at the provider (dry run: nothing changed)\n", id)
		case d.NodePool != nil:
			fmt.Fprintf(w, "- nodepool %s (%s) would be Deleting until its controllers remove it at the provider (deletionPolicy %s; dry run: nothing changed)\n",
				d.NodePool.Name, id, orDash(string(d.NodePool.Spec.DeletionPolicy)))
		default:
			fmt.Fprintf(w, "- nodepool %s would be deleted (dry run: nothing changed)\n", id)
		}
	})
}
