package main

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/poolspec"
)

const poolUpdateLong = `Change a node pool's spec.

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
with VALIDATION_ERROR naming the field, unless the pool's strategy is
--replacement Surge: then kpool replaces the pool (a successor pool is
created, the old nodes drained onto it, the old pool deleted; --max-surge,
--max-unavailable, --drain-timeout, --soak and --on-stuck say how), and
--wait follows the replacement until it is Done (kpool nodepool rollback
undoes it). One the provider cannot do at all fails with NOT_IMPLEMENTED. --dry-run shows the plan, each changed field and what the
provider does about it (in place, rolling the nodes, or for new nodes only),
and changes nothing.`

// poolUpdate is nodepool update: its flags, and what it does with them.
type poolUpdate struct {
	f             *clientFlags
	pool          poolFlags
	wait          waitFlags
	file, rv      string
	patch, dryRun bool
}

func newPoolUpdate(f *clientFlags) *cobra.Command {
	o := &poolUpdate{f: f}
	cmd := &cobra.Command{
		Use:   "update ID [flags] | update ID -f FILE [--patch] [flags]",
		Short: "Change a node pool's spec",
		Long:  poolUpdateLong,
		Args:  idArg("node pool"),
		RunE:  o.run,
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.file, "filename", "f", "", "YAML or JSON file of the node pool; - reads stdin")
	fs.BoolVar(&o.patch, "patch", false, "send -f FILE as a JSON merge patch (PATCH) instead of a PUT")
	fs.StringVar(&o.rv, "resource-version", "", "change only if the pool is still at this resource version")
	dryRunFlag(fs, &o.dryRun)
	o.pool.register(fs)
	o.wait.register(fs, "is Ready with the change")
	return cmd
}

func (o *poolUpdate) run(cmd *cobra.Command, args []string) error {
	fs := cmd.Flags()
	if err := o.wait.check(fs, o.dryRun); err != nil {
		return err
	}
	id := args[0]
	s := o.pool.settings(fs)
	body, err := o.body(cmd, id, s)
	if err != nil {
		return err
	}
	c := o.f.writer(cmd)
	spec, err := specs.ForPool(cmd.Context(), c, id, s)
	if err != nil {
		return err
	}
	if body.Spec, err = mergeSpec(body.Spec, spec); err != nil {
		return err
	}
	if fs.Changed("resource-version") {
		body.ResourceVersion = o.rv
	}
	if o.dryRun {
		return o.dryRunUpdate(cmd, c, id, body)
	}
	p, err := c.UpdateNodePool(cmd.Context(), id, body, o.patch)
	if err != nil {
		return err
	}
	return o.f.waitAndPrint(cmd, c, o.wait, p)
}

// body is -f FILE's body for pool id, or an empty one when the flags s
// give the change.
func (o *poolUpdate) body(cmd *cobra.Command, id string, s *poolspec.Settings) (api.NodePoolBody, error) {
	var body api.NodePoolBody
	switch {
	case o.file != "":
		if err := decodePoolFile(cmd, o.file, &body); err != nil {
			return body, err
		}
		if body.ID != "" && body.ID != id {
			return body, fmt.Errorf("the file is node pool %s, not %s", body.ID, id)
		}
	case o.patch:
		return body, errors.New("--patch sends -f FILE as a merge patch: give -f FILE")
	case s.Empty():
		return body, errors.New("nothing to update: give flags such as --count or --machine-type, or -f FILE")
	}
	return body, nil
}

// dryRunUpdate prints the plan of the update. A change of the update
// strategy's own settings alone (replacement) has no row at the provider:
// it is told apart from no change by the spec the dry run would store.
func (o *poolUpdate) dryRunUpdate(cmd *cobra.Command, c *api.Client, id string, body api.NodePoolBody) error {
	before, err := c.NodePool(cmd.Context(), id)
	if err != nil {
		return err
	}
	d, err := c.DryRunNodePool(cmd.Context(), id, body, o.patch)
	if err != nil {
		return err
	}
	if o.f.table() && d.Plan != nil && len(d.Plan.Changes) == 0 && d.NodePool != nil && d.NodePool.Generation > before.Generation &&
		!reflect.DeepEqual(before.Spec.UpdateStrategy, d.NodePool.Spec.UpdateStrategy) {
		fmt.Fprintf(cmd.OutOrStdout(), "No changes at the provider: only the update strategy changes (generation %d -> %d).\n",
			before.Generation, d.NodePool.Generation)
		return nil
	}
	return o.f.printDryRun(cmd, d)
}
