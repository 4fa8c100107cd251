package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/service"
)

// kpool apply and kpool diff: a fleet of node pools declared in a file.
// Each document of the file is a node pool as the API takes it; a pool is
// found by its name within its cluster, created when it does not exist and
// PUT with the file's spec when it does.

// applyDoc is one document of an apply file: the API's node pool body,
// with the cluster given by cluster_id or, by name or ID, by cluster.
type applyDoc struct {
	api.NodePoolBody
	Cluster string `json:"cluster,omitempty"`
}

// docSep is a YAML document separator line.
var docSep = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// readApplyFile reads the node pools of a YAML or JSON file ("-" for
// stdin): YAML documents separated by ---, each one pool or a list of
// pools. Every document at fault is reported in one error.
func readApplyFile(cmd *cobra.Command, name string) ([]applyDoc, error) {
	var data []byte
	var err error
	shown := name
	if name == "-" {
		shown = "stdin"
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	var docs []applyDoc
	var fe kpool.FieldErrors
	for i, part := range docSep.Split(string(data), -1) {
		where := fmt.Sprintf("document %d", i+1)
		js, err := yaml.YAMLToJSON([]byte(part))
		if err != nil {
			fe.Add(where, "not YAML or JSON: %v", err)
			continue
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || string(js) == "null" {
			continue // an empty document, or only comments
		}
		items := []json.RawMessage{js}
		if js[0] == '[' {
			if err := json.Unmarshal(js, &items); err != nil {
				fe.Add(where, "%v", err)
				continue
			}
		}
		for j, item := range items {
			w := where
			if len(items) > 1 || js[0] == '[' {
				w = fmt.Sprintf("%s[%d]", where, j)
			}
			var d applyDoc
			if !jsondoc.Decode(item, &d, "", func(field, reason string) { fe.Add(w+": "+field, "%s", reason) }) {
				continue
			}
			docs = append(docs, d)
		}
	}
	if err := fe.Err(); err != nil {
		e := err.(*kpool.Error)
		e.Message = shown + ": " + e.Message
		return nil, e
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s has no node pools", shown)
	}
	return docs, nil
}

// applyItem is one pool of the file and what the server has of it.
type applyItem struct {
	doc     applyDoc
	name    string
	cluster string          // the cluster's ID
	ref     string          // the cluster as the file names it
	live    *kpool.NodePool // nil: not there, to be created
	err     error           // why the pool cannot be applied
}

// label names the pool for people: "web in cluster prod".
func (it *applyItem) label() string {
	name := it.name
	if name == "" {
		name = "(no name)"
	}
	if it.ref == "" {
		return name
	}
	return name + " in cluster " + it.ref
}

// resolve finds each document's cluster (def, the context's cluster, for
// a document that names none) and the pool of its name there, if any. A
// document that cannot be applied (no name, no cluster, a cluster not
// found, the same pool twice) carries its error; the others go on.
func resolve(ctx context.Context, c *api.Client, docs []applyDoc, def string) []*applyItem {
	items := make([]*applyItem, len(docs))
	clusters := map[string]string{} // reference → ID
	seen := map[[2]string]bool{}
	for i, d := range docs {
		it := &applyItem{doc: d}
		items[i] = it
		if d.Name != nil {
			it.name = *d.Name
		}
		var fe kpool.FieldErrors
		if it.name == "" {
			fe.Add("name", "is required: the pool is found by its name within its cluster")
		}
		cid := ""
		if d.ClusterID != nil {
			cid = *d.ClusterID
		}
		switch {
		case cid != "" && d.Cluster != "" && cid != d.Cluster:
			it.ref = d.Cluster
		case cid != "":
			it.ref = cid
		case d.Cluster != "":
			it.ref = d.Cluster
		default:
			it.ref = def
		}
		if it.ref == "" {
			fe.Add("cluster_id", "is required: give cluster_id, or cluster with the cluster's name or ID (or use a context with a cluster)")
		}
		if err := fe.Err(); err != nil {
			it.err = err
			continue
		}
		id, ok := clusters[it.ref]
		if !ok {
			var err error
			if id, err = clusterID(ctx, c, it.ref); err != nil {
				it.err = err
				continue
			}
			clusters[it.ref] = id
		}
		if cid != "" && d.Cluster != "" && cid != d.Cluster && !strings.EqualFold(cid, id) {
			it.err = kpool.Invalid("cluster", "%q is cluster %s, but cluster_id is %s: give one of the two", d.Cluster, id, cid)
			continue
		}
		it.cluster = id
		key := [2]string{id, it.name}
		if seen[key] {
			it.err = kpool.Invalid("name", "the file has node pool %q in cluster %s more than once", it.name, it.ref)
			continue
		}
		seen[key] = true
		list, err := c.NodePools(ctx, service.ListOptions{ClusterID: id, Name: it.name, Limit: kpool.MaxLimit})
		if err != nil {
			it.err = err
			continue
		}
		for _, p := range list.NodePools {
			if p.Name == it.name && p.ClusterID == id {
				it.live = p
			}
		}
		if it.live != nil && d.ID != "" && !strings.EqualFold(d.ID, it.live.ID) {
			it.err = kpool.Invalid("id", "%s, but node pool %s is %s", d.ID, it.label(), it.live.ID)
		}
	}
	return items
}

// body is the request that brings the pool to the file: a create, or a PUT
// of the file's spec at the live pool's resource version.
func (it *applyItem) body() api.NodePoolBody {
	spec := it.doc.Spec
	if len(bytes.TrimSpace(spec)) == 0 {
		spec = json.RawMessage("{}") // the server names what is missing
	}
	if it.live == nil {
		name, cluster := it.name, it.cluster
		return api.NodePoolBody{ID: it.doc.ID, Name: &name, ClusterID: &cluster, Spec: spec}
	}
	return api.NodePoolBody{Spec: spec, ResourceVersion: it.live.ResourceVersion}
}

// Actions of apply, as reported.
const (
	actCreate    = "create"
	actUpdate    = "update"
	actUnchanged = "unchanged"
	actRefused   = "refused"
)

// applyResult is what apply did (or, in a dry run, would do) to one pool:
// the shape of apply -o json.
type applyResult struct {
	Name      string          `json:"name"`
	ClusterID string          `json:"cluster_id,omitempty"`
	Cluster   string          `json:"cluster,omitempty"`
	Action    string          `json:"action"`
	NodePool  *kpool.NodePool `json:"nodepool,omitempty"`
	Plan      *kpool.Plan     `json:"plan,omitempty"`
	Error     *kpool.Error    `json:"error,omitempty"`
	// live is the pool before (nil for a create).
	live *kpool.NodePool
}

// applyOne sends the item's request, or its dry run.
func applyOne(ctx context.Context, c *api.Client, it *applyItem, dryRun bool) applyResult {
	r := applyResult{Name: it.name, ClusterID: it.cluster, Cluster: it.ref, live: it.live}
	refuse := func(err error) applyResult {
		r.Action, r.Error = actRefused, asError(err)
		return r
	}
	if it.err != nil {
		return refuse(it.err)
	}
	if it.live != nil && len(bytes.TrimSpace(it.doc.Spec)) == 0 {
		return refuse(kpool.Invalid("spec", "is required: apply PUTs the file's spec to the pool"))
	}
	b := it.body()
	switch {
	case dryRun:
		var d *api.DryRun
		var err error
		if it.live == nil {
			d, err = c.DryRunCreateNodePool(ctx, b)
		} else {
			d, err = c.DryRunNodePool(ctx, it.live.ID, b, false)
		}
		if err != nil {
			return refuse(err)
		}
		r.NodePool, r.Plan = d.NodePool, d.Plan
		switch {
		case it.live == nil:
			r.Action = actCreate
		case d.Plan == nil || len(d.Plan.Changes) == 0:
			r.Action = actUnchanged
		default:
			r.Action = actUpdate
			if d.Plan.Refusal() != nil { // the real write would be refused
				r.Action, r.Error = actRefused, asError(d.Plan.Refusal())
			}
		}
	case it.live == nil:
		p, err := c.CreateNodePool(ctx, b)
		if err != nil {
			return refuse(err)
		}
		r.Action, r.NodePool = actCreate, p
	default:
		p, err := c.UpdateNodePool(ctx, it.live.ID, b, false)
		if err != nil {
			return refuse(err)
		}
		r.Action, r.NodePool = actUpdate, p
		if p.Generation == it.live.Generation {
			r.Action = actUnchanged
		}
	}
	return r
}

// asError is err as an API error (a local one as VALIDATION_ERROR's
// message).
func asError(err error) *kpool.Error {
	var e *kpool.Error
	if errors.As(err, &e) {
		return e
	}
	return &kpool.Error{Code: kpool.CodeValidation, Message: err.Error()}
}

func newApplyCmd() *cobra.Command {
	f := &clientFlags{}
	var (
		file   string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--dry-run]",
		Short: "Create or update node pools to match a file",
		Long: `Create or update node pools to match a file.

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
any was refused.`,
		Example: `  # Bring the pools of pools.yaml into being, or up to date
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
  #     autoscaling: {enabled: true, minNodes: 0, maxNodes: 10}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("give -f FILE: the node pools to apply")
			}
			docs, err := readApplyFile(cmd, file)
			if err != nil {
				return err
			}
			c := f.writer(cmd)
			var results []applyResult
			refused := 0
			for _, it := range resolve(cmd.Context(), c, docs, f.defaultCluster) {
				r := applyOne(cmd.Context(), c, it, dryRun)
				if r.Action == actRefused {
					refused++
				}
				results = append(results, r)
			}
			if f.output == outName {
				err = applyNames(cmd.OutOrStdout(), results)
			} else {
				err = f.print(cmd, results, func(w io.Writer) { applyView(w, results, dryRun) })
			}
			if err != nil {
				return err
			}
			if refused > 0 {
				return fmt.Errorf("%d of %d node pools refused", refused, len(results))
			}
			return nil
		},
	}
	f.register(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&file, "filename", "f", "", "YAML or JSON file of node pools; - reads stdin")
	fs.BoolVar(&dryRun, "dry-run", false, "show the plan for every pool, changing nothing")
	return cmd
}

// applyView shows what apply did, or with dryRun the plan as terraform plan
// does: + create, ~ update, = unchanged, ! refused, then a count of each.
func applyView(w io.Writer, results []applyResult, dryRun bool) {
	count := map[string]int{}
	for _, r := range results {
		count[r.Action]++
		switch r.Action {
		case actCreate:
			if !dryRun {
				fmt.Fprintf(w, "+ nodepool %s created (%s)\n", r.label(), r.NodePool.ID)
				continue
			}
			fmt.Fprintf(w, "+ nodepool %s will be created\n", r.label())
			if r.NodePool != nil {
				lines := flatten("spec", r.NodePool.Spec)
				for _, k := range sortedKeys(lines) {
					fmt.Fprintf(w, "    + %s = %s\n", k, lines[k])
				}
			}
		case actUpdate:
			if !dryRun {
				fmt.Fprintf(w, "~ nodepool %s updated (generation %d)\n", r.label(), r.NodePool.Generation)
				continue
			}
			fmt.Fprintf(w, "~ nodepool %s will be updated\n", r.label())
			planLines(w, r.Plan)
		case actUnchanged:
			fmt.Fprintf(w, "= nodepool %s unchanged\n", r.label())
		case actRefused:
			verb := "refused"
			if dryRun {
				verb = "would be refused"
			}
			fmt.Fprintf(w, "! nodepool %s %s: %s: %s\n", r.label(), verb, r.Error.Code, r.Error.Message)
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
	fmt.Fprintf(w, format, count[actCreate], count[actUpdate], count[actUnchanged], count[actRefused])
}

// applyNames is apply -o name: nodepool/ID of each pool created, updated
// or unchanged (in a dry run, of each that exists), as kubectl apply -o
// name prints.
func applyNames(w io.Writer, results []applyResult) error {
	for _, r := range results {
		if r.Action == actRefused || r.NodePool == nil || r.NodePool.ID == "" {
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
		line := fmt.Sprintf("    ~ %s: %s -> %s   (%s", c.Field, jsonValue(c.From), jsonValue(c.To), c.Class)
		if c.Reason != "" {
			line += ": " + oneLine(c.Reason)
		}
		fmt.Fprintln(w, line+")")
	}
	if len(p.Changes) > 0 {
		fmt.Fprintf(w, "    %s\n", planSummary(p))
	}
}

func (r applyResult) label() string {
	it := applyItem{name: r.Name, ref: r.Cluster}
	return it.label()
}

// flatten returns v's leaves as JSON (objects recursed into, by dotted
// path under prefix; lists and scalars whole), leaving out nulls and empty
// objects.
func flatten(prefix string, v any) map[string]string {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]string{prefix: fmt.Sprint(v)}
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return map[string]string{prefix: string(b)}
	}
	out := map[string]string{}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch t := x.(type) {
		case nil:
		case map[string]any:
			for k, v := range t {
				walk(path+"."+k, v)
			}
		default:
			out[path] = jsonValue(t)
		}
	}
	walk(prefix, x)
	return out
}
