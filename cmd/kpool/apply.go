package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/apply"
)

// kpool apply and kpool diff: a fleet of node pools declared in a file.
// Package apply reads the file and brings the pools to it; these commands
// take its flags and show what came of it.

const applyLong = `Create or update node pools to match a file.

FILE (YAML or JSON; - reads stdin) holds node pools, one per YAML document
(separated by ---) or as a list, each as the API takes it: name, cluster_id
(or cluster: a cluster's name or ID; without either, the context's
cluster) and spec. The output of
kpool nodepool get -o yaml is such a document.

A pool is found by its name within its cluster. One that does not exist is
created; one that does is updated with a PUT of the file's spec at the
pool's current resource version, so that a change made meanwhile fails with
CONFLICT instead of being overwritten. As with every PUT, maps such as labels
merge key by key and fields the file leaves out keep their value. Pools that
the file does not name are left alone.

--dry-run shows, for every pool, the plan (what would be created, and each
changed field with what the provider does about it: in_place, rolls_nodes,
new_nodes_only, replace or not_implemented), using the API's dry run, and
changes nothing.

Every pool is tried; the command fails (exit 1) after reporting them all if
any was refused.`

const applyExample = `  # Bring the pools of pools.yaml into being, or up to date
  kpool apply -f pools.yaml

  # See the plan first: what would be created and updated, field by field
  kpool apply -f pools.yaml --dry-run

  # pools.yaml:
  #   name: web
  #   cluster: prod
  #   spec:
  #     nodeCount: 3
  #     platform:
  #       gcp:
  #         machineType: e2-standard-4
  #   ---
  #   name: batch
  #   cluster_id: 0b9f8c52-2f86-4c1b-9a53-9d3c0e2b7a10
  #   spec:
  #     autoscaling: {enabled: true, minNodes: 0, maxNodes: 10}`

func newApplyCmd() *cobra.Command {
	f := &clientFlags{}
	var (
		file   string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:     "apply -f FILE [--dry-run]",
		Short:   "Create or update node pools to match a file",
		Long:    applyLong,
		Example: applyExample,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runApply(cmd, f, file, dryRun) },
	}
	f.register(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&file, "filename", "f", "", "YAML or JSON file of node pools; - reads stdin")
	fs.BoolVar(&dryRun, "dry-run", false, "show the plan for every pool, changing nothing")
	return cmd
}

// runApply applies file, or with dryRun shows its plan, and fails after
// reporting every pool if any was refused.
func runApply(cmd *cobra.Command, f *clientFlags, file string, dryRun bool) error {
	if file == "" {
		return errors.New("give -f FILE: the node pools to apply")
	}
	docs, err := readApplyFile(cmd, file)
	if err != nil {
		return err
	}
	results := apply.Run(cmd.Context(), f.writer(cmd), docs, f.defaultCluster, dryRun)
	if f.output == outName {
		err = applyNames(cmd.OutOrStdout(), results)
	} else {
		err = f.print(cmd, results, func(w io.Writer) { applyView(w, results, dryRun) })
	}
	if err != nil {
		return err
	}
	refused := 0
	for _, r := range results {
		if r.Action == apply.Refused {
			refused++
		}
	}
	if refused > 0 {
		return fmt.Errorf("%d of %d node pools refused", refused, len(results))
	}
	return nil
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

// applyView shows what apply did, or with dryRun the plan as terraform plan
// does: + create, ~ update, = unchanged, ! refused, then a count of each.
func applyView(w io.Writer, results []apply.Result, dryRun bool) {
	count := map[apply.Action]int{}
	for _, r := range results {
		count[r.Action]++
		switch r.Action {
		case apply.Create:
			if !dryRun {
				fmt.Fprintf(w, "+ nodepool %s created (%s)\n", r.Label(), r.NodePool.ID)
				continue
			}
			fmt.Fprintf(w, "+ nodepool %s will be created\n", r.Label())
			if r.NodePool != nil {
				lines := apply.Fields("spec", r.NodePool.Spec)
				for _, k := range sortedKeys(lines) {
					fmt.Fprintf(w, "    + %s = %s\n", k, lines[k])
				}
			}
		case apply.Update:
			if !dryRun {
				fmt.Fprintf(w, "~ nodepool %s updated (generation %d)\n", r.Label(), r.NodePool.Generation)
				continue
			}
			fmt.Fprintf(w, "~ nodepool %s will be updated\n", r.Label())
			planLines(w, r.Plan)
		case apply.Unchanged:
			fmt.Fprintf(w, "= nodepool %s unchanged\n", r.Label())
		case apply.Refused:
			verb := "refused"
			if dryRun {
				verb = "would be refused"
			}
			fmt.Fprintf(w, "! nodepool %s %s: %s: %s\n", r.Label(), verb, r.Error.Code, r.Error.Message)
			planLines(w, r.Plan)
			if r.Error.Details != "" && len(r.Error.Fields) == 0 {
				fmt.Fprintf(w, "    %s\n", oneLine(r.Error.Details))
			}
			for _, fe := range r.Error.Fields {
				fmt.Fprintf(w, "    %s: %s\n", fe.Field, oneLine(fe.Reason))
			}
		}
	}
	format := "Applied: %d created, %d updated, %d unchanged, %d refused.\n"
	if dryRun {
		format = "Plan: %d to create, %d to update, %d unchanged, %d refused.\n"
	}
	fmt.Fprintf(w, format, count[apply.Create], count[apply.Update], count[apply.Unchanged], count[apply.Refused])
}

// applyNames is apply -o name: nodepool/ID of each pool created, updated
// or unchanged (in a dry run, of each that exists), as kubectl apply -o
// name prints.
func applyNames(w io.Writer, results []apply.Result) error {
	for _, r := range results {
		if r.Action == apply.Refused || r.NodePool == nil || r.NodePool.ID == "" {
			continue
		}
		if _, err := fmt.Fprintln(w, "nodepool/"+r.NodePool.ID); err != nil {
			return err
		}
	}
	return nil
}

// planLines shows a plan's changes: "~ spec.nodeCount: 2 -> 3  (in_place:
// the reason)".
func planLines(w io.Writer, p *kpool.Plan) {
	if p == nil {
		return
	}
	for _, c := range p.Changes {
		line := fmt.Sprintf("    ~ %s: %s -> %s   (%s", c.Field, jsonValue(c.From), jsonValue(c.To), classText(p, c))
		if c.Reason != "" {
			line += ": " + oneLine(c.Reason)
		}
		fmt.Fprintln(w, line+")")
	}
	if len(p.Changes) > 0 {
		fmt.Fprintf(w, "    %s\n", planSummary(p))
	}
}
