package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
)

// newClusterUpdate changes a registered cluster: the fields its flags give
// are merged into it (a PATCH), or -f FILE's spec with the flags over it.
func newClusterUpdate(f *clientFlags) *cobra.Command {
	var c clusterCreateFlags
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "update ID [platform flags] [--endpoint URL] [--credential NAME] [--team TEAM] [-f FILE]",
		Short: "Change a registered cluster (what the flags give; the rest stays)",
		Long: `Change a registered cluster: the fields the flags give are merged into it
(a PATCH). The fields that say which cloud cluster it is cannot change.

Platform flags:
` + clusterFlagsHelp(),
		Example: `  kpool cluster update prod --endpoint https://arm.example.com
  kpool cluster update prod-oke --image-id ocid1.image.oc1.iad.newimage
  kpool cluster update prod --credential team-a --dry-run
  kpool cluster update prod --team platform`,
		Args: idArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			cl := f.client()
			cur, err := cl.Cluster(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var body api.ClusterBody
			if c.file != "" {
				if err := decodeFile(cmd, c.file, &body); err != nil {
					return err
				}
			}
			spec, err := c.spec(fs, cur.Spec.Platform.Type)
			if err != nil {
				return err
			}
			if fs.Changed("team") {
				body.Team = &c.team
			}
			given := fs.Changed("endpoint") || fs.Changed("credential") || fs.Changed("kubeconfig") || fs.Changed("team")
			for _, p := range clusterPlatformFlags() {
				given = given || fs.Changed(p.name)
			}
			if !given && c.file == "" {
				return errors.New("nothing to update: give flags such as --endpoint, --team or a platform flag, or -f FILE")
			}
			merged, err := mergeSpec(body.Spec, spec)
			if err != nil {
				return err
			}
			body.Spec = merged
			body.ResourceVersion = cur.ResourceVersion
			w := f.writer(cmd)
			if dryRun {
				var d api.DryRun
				_, err := w.Do(cmd.Context(), "PATCH", "/api/v1/clusters/"+cur.ID, map[string][]string{"dry_run": {"true"}}, nil, body, &d)
				if err != nil {
					return err
				}
				return f.print(cmd, &d, func(out io.Writer) {
					b, _ := json.MarshalIndent(d.Cluster.Spec, "", "  ")
					fmt.Fprintf(out, "cluster %s would become:\n%s\n", cur.Name, b)
				})
			}
			updated, err := w.UpdateCluster(cmd.Context(), cur.ID, body, true)
			if err != nil {
				return err
			}
			return f.print(cmd, updated, func(out io.Writer) { clusterView(out, updated, f.clock.Now()) })
		},
	}
	c.register(cmd.Flags())
	_ = cmd.Flags().MarkHidden("id")
	_ = cmd.Flags().MarkHidden("platform")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the cluster as it would be, and store nothing")
	return cmd
}
