package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/apply"
)

// kpool apply and kpool diff: a fleet of node pools declared in a file.
// Package apply reads the file, plans and brings the pools to it; these
// commands take its flags and show what came of it.

const applyLong = `Make node pools match a file, as kubectl apply and terraform apply do.

FILE (YAML or JSON; - reads stdin) holds node pools, one per YAML document
(separated by ---), as a list, or as a page of kpool nodepool list -o yaml;
each as the API takes it: name, cluster_id (or cluster: a cluster's name or
ID; without either, the context's cluster) and spec. What get -o yaml and
list -o yaml print can be applied: the fields the server sets (status,
generation, resource_version, created_at…) are ignored.

Each document is the WHOLE desired spec of its pool. A pool is found by its
name within its cluster: one that does not exist is created; one that does
is patched to the document, fields the document leaves out returning to
their defaults (a label taken out of the file is taken off the pool), at
the pool's current resource version, so that a change made meanwhile fails
with CONFLICT instead of being overwritten.

The whole file is read, resolved and planned (the server's dry run of every
write) before anything is written. If any document is invalid or its write
would be refused, nothing is written: every problem is listed, and apply
exits 1. Then the writes are made in file order.

A change the provider makes only with a new pool is carried out by the
pool's spec.updateStrategy: replacement Surge replaces the pool without
downtime (the plan says "surge N, drain T"); under the default, Refuse, the
plan says why it is refused and apply writes nothing.

--prune also deletes the pools of the clusters the file names that the file
no longer holds; with -l SELECTOR only those matching it (kubectl's syntax,
on spec.labels). Pools a logical pool made are skipped: it keeps them.

--dry-run shows the plan, changing nothing.`

const applyExample = `  # See the plan: what would be created, updated, replaced and deleted
  kpool apply -f pools.yaml --dry-run

  # Bring the pools of pools.yaml into being, or up to date
  kpool apply -f pools.yaml

  # ... and delete the pools of its clusters that it no longer names, among team=web's
  kpool apply -f pools.yaml --prune -l team=web

  # Copy a fleet as it is
  kpool nodepool list -o yaml > fleet.yaml && kpool apply -f fleet.yaml

  # pools.yaml:
  #   name: web
  #   cluster: prod
  #   spec:
  #     nodeCount: 3
  #     labels: {team: web}
  #     platform:
  #       gcp:
  #         machineType: e2-standard-4
  #   ---
  #   name: batch
  #   cluster: prod
  #   spec:
  #     autoscaling: {enabled: true, minNodes: 0, maxNodes: 10}
  #     platform: {gcp: {machineType: e2-standard-8}}
  #     updateStrategy: {replacement: Surge}`

// applyFlags are the flags apply and diff share.
type applyFlags struct {
	file, selector string
	prune          bool
}

func (a *applyFlags) register(fs *pflag.FlagSet, verb string) {
	fs.StringVarP(&a.file, "filename", "f", "", "YAML or JSON file of node pools; - reads stdin")
	fs.BoolVar(&a.prune, "prune", false, verb+" the pools of the file's clusters that the file does not name")
	fs.StringVarP(&a.selector, "selector", "l", "", "with --prune, only pools whose labels match (kubectl's syntax: team=web,tier!=db)")
}

// options are apply's options from the flags, the documents read.
func (a *applyFlags) options(cmd *cobra.Command, f *clientFlags, what string) ([]apply.Document, apply.Options, error) {
	o := apply.Options{DefaultCluster: f.defaultCluster, Prune: a.prune}
	if a.file == "" {
		return nil, o, errors.New("give -f FILE: the node pools to " + what)
	}
	if a.selector != "" {
		if !a.prune {
			return nil, o, errors.New("-l selects the pools --prune may delete: give --prune too")
		}
		sel, err := kpool.ParseSelector("--selector (-l)", a.selector)
		if err != nil {
			return nil, o, err
		}
		o.Selector = sel
	}
	docs, err := readApplyFile(cmd, a.file)
	return docs, o, err
}

func newApplyCmd() *cobra.Command {
	f := &clientFlags{}
	a := &applyFlags{}
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "apply -f FILE [--prune [-l SELECTOR]] [--dry-run]",
		Short:   "Make node pools match a file",
		Long:    applyLong,
		Example: applyExample,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runApply(cmd, f, a, dryRun) },
	}
	f.register(cmd)
	a.register(cmd.Flags(), "delete")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the plan, changing nothing")
	return cmd
}

// runApply applies the file, or with dryRun shows its plan, and fails if
// any pool was refused.
func runApply(cmd *cobra.Command, f *clientFlags, a *applyFlags, dryRun bool) error {
	docs, o, err := a.options(cmd, f, "apply")
	if err != nil {
		return err
	}
	o.DryRun = dryRun
	rep, err := apply.Run(cmd.Context(), f.writer(cmd), docs, o)
	if err != nil {
		return err
	}
	if f.output == outName {
		err = applyNames(cmd, rep.Results)
	} else {
		err = f.print(cmd, rep.Results, func(w io.Writer) { applyView(w, rep) })
	}
	if err != nil {
		return err
	}
	n := rep.Refused()
	switch {
	case n == 0:
		return nil
	case rep.Wrote:
		return fmt.Errorf("%d of %d node pools refused", n, len(rep.Results))
	}
	return fmt.Errorf("%d of %d node pools refused: nothing was written", n, len(rep.Results))
}

// readApplyFile reads the node pools of a YAML or JSON file ("-" for
// stdin); see apply.Read.
func readApplyFile(cmd *cobra.Command, name string) ([]apply.Document, error) {
	data, shown, err := readFile(cmd, name)
	if err != nil {
		return nil, err
	}
	return apply.Read(data, shown)
}

// applyNames is apply -o name: nodepool/ID of each pool created, updated
// or unchanged (in a dry run, of each that exists), as kubectl apply -o
// name prints.
func applyNames(cmd *cobra.Command, results []apply.Result) error {
	for _, r := range results {
		if r.Action == apply.Refused || r.Action == apply.Skipped || r.NodePool == nil || r.NodePool.ID == "" {
			continue
		}
		if _, err := fmt.Fprintln(cmd.OutOrStdout(), "nodepool/"+r.NodePool.ID); err != nil {
			return err
		}
	}
	return nil
}
