package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/apply"
)

const poolCreateLong = `Create a node pool in a cluster.

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

With -f FILE (YAML or JSON; - reads stdin) the pool is a document as kpool
apply takes it: name, cluster (a name or ID) or cluster_id, and spec (the
output of nodepool get -o yaml is one). NAME, --cluster and --id are taken
over the file's; the file's spec is the base and the flags given are merged
over it, as a PUT would: maps such as labels merge key by key, lists such
as taints replace.`

// poolCreate is nodepool create: its flags, and what it does with them.
type poolCreate struct {
	f                 *clientFlags
	pool              poolFlags
	wait              waitFlags
	file, cluster, id string
	dryRun, perZone   bool
	// clusterGiven says --cluster was on the command line (not the
	// context's).
	clusterGiven bool
}

func newPoolCreate(f *clientFlags) *cobra.Command {
	o := &poolCreate{f: f}
	cmd := &cobra.Command{
		Use:   "create NAME --cluster CLUSTER [flags] | create [NAME] -f FILE [flags]",
		Short: "Create a node pool",
		Long:  poolCreateLong,
		Args:  nameArg("node pool"),
		RunE:  o.run,
		// Before the context's cluster fills in --cluster: a file's cluster
		// comes before the context's.
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			o.clusterGiven = cmd.Flags().Changed("cluster")
			return nil
		},
	}
	fs := cmd.Flags()
	dryRunFlag(fs, &o.dryRun)
	fs.BoolVar(&o.perZone, "per-zone", false, "one pool per zone of --zones (NAME-ZONE), all in logical pool NAME (their nodes' kompox.dev/node-pool), created together: the zonal pattern")
	fs.StringVarP(&o.file, "filename", "f", "", "YAML or JSON file of the node pool; - reads stdin")
	fs.StringVar(&o.cluster, "cluster", "", "the cluster (name or ID)")
	fs.StringVar(&o.id, "id", "", "node pool ID (a UUID) to use instead of a generated one")
	o.pool.register(fs)
	o.wait.register(fs, "is Ready")
	return cmd
}

func (o *poolCreate) run(cmd *cobra.Command, args []string) error {
	fs := cmd.Flags()
	if err := o.wait.check(fs, o.dryRun); err != nil {
		return err
	}
	c := o.f.writer(cmd)
	body, err := o.body(cmd, c, args)
	if err != nil {
		return err
	}
	spec, err := specs.ForCluster(cmd.Context(), c, *body.ClusterID, o.pool.settings(fs))
	if err != nil {
		return err
	}
	if body.Spec, err = mergeSpec(body.Spec, spec); err != nil {
		return err
	}
	if len(body.Spec) == 0 {
		body.Spec = json.RawMessage("{}") // the server names what is missing
	}
	switch {
	case o.perZone && o.dryRun:
		return errors.New("--per-zone takes no --dry-run: check one member with nodepool create --dry-run")
	case o.perZone:
		return o.createPerZone(cmd, c, body)
	case o.dryRun:
		return o.f.dryRunCreate(cmd, c, body)
	}
	p, err := c.CreateNodePool(cmd.Context(), body)
	if err != nil {
		return err
	}
	return o.f.waitAndPrint(cmd, c, o.wait, p)
}

// body is the pool to create but for the spec flags: -f FILE's, with NAME,
// --cluster and --id over it.
func (o *poolCreate) body(cmd *cobra.Command, c *api.Client, args []string) (api.NodePoolBody, error) {
	fs := cmd.Flags()
	var body api.NodePoolBody
	var doc *apply.Document
	if o.file != "" {
		docs, err := readApplyFile(cmd, o.file)
		if err != nil {
			return body, err
		}
		if len(docs) != 1 {
			return body, fmt.Errorf("-f %s holds %d node pools: nodepool create takes one (kpool apply -f takes many)", o.file, len(docs))
		}
		doc, body = &docs[0], docs[0].NodePoolBody
	}
	if len(args) == 1 {
		body.Name = &args[0]
	}
	if body.Name == nil || *body.Name == "" {
		return body, errors.New("give the node pool's NAME (or a name in -f FILE)")
	}
	switch {
	case o.clusterGiven || doc == nil:
		body.ClusterID = &o.cluster
	default: // the file's cluster, else the context's
		cl, err := apply.ClusterOf(cmd.Context(), c, *doc, o.cluster)
		if err != nil {
			return body, err
		}
		body.ClusterID = &cl.ID
	}
	if *body.ClusterID == "" {
		return body, errors.New("--cluster is required: the node pool's cluster (name or ID)")
	}
	if fs.Changed("id") {
		body.ID = o.id
	}
	return body, nil
}

// createPerZone creates a zonal logical pool: one member per zone, in one
// request; with --wait, it waits for each.
func (o *poolCreate) createPerZone(cmd *cobra.Command, c *api.Client, body api.NodePoolBody) error {
	list, err := c.CreateZonalNodePools(cmd.Context(), body)
	if err != nil {
		return err
	}
	if o.wait.wait {
		for i, p := range list.NodePools {
			final, err := newWaiter(cmd, c, o.f.clock.Tick, p, false).run(cmd.Context(), o.wait.timeout)
			if err != nil {
				return err
			}
			list.NodePools[i] = final
		}
	}
	return o.f.print(cmd, list, o.f.pools(cmd, list.NodePools...))
}
