package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
)

// newClusterImport is `kpool cluster import CLUSTER PROVIDER_NAME`: one
// pool the controllers found at the cluster's provider, recorded as a
// kpool pool in observe mode (kpool reports on it and never writes it).
// `kpool cluster get` lists the pools there are: unmarked ones, and
// another kpool's, which only an admin may import, with --force.
func newClusterImport(f *clientFlags) *cobra.Command {
	var b api.ImportBody
	cmd := &cobra.Command{
		Use:   "import ID PROVIDER_NAME",
		Short: "Import a pool found at the cluster's provider, in observe mode",
		Long: `Import a pool the controllers found at the cluster's provider as a kpool
pool in observe mode: kpool reports on it and never changes or deletes it.
The pool must be listed by 'kpool cluster get' (from the controllers' last
list): an unmarked pool, or, for an admin with --force, one another kpool
installation owns (its owner's mark is kept, and the audit trail says the
import was forced and whose mark the pool carries).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b.ProviderName = args[1]
			p, err := f.writer(cmd).ImportNodePool(cmd.Context(), args[0], b)
			if err != nil {
				return err
			}
			if !f.table() {
				return f.print(cmd, p, nil)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "node pool %s (%s) imported from %s in observe mode\n", p.Name, p.ID, p.ProviderName)
			return nil
		},
	}
	cmd.Flags().StringVar(&b.Name, "name", "", "the kpool pool's name (default: the pool's kompox.dev/node-pool label, else its provider name)")
	cmd.Flags().BoolVar(&b.Force, "force", false, "import a pool another kpool owns (admins only)")
	return cmd
}
