package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// Options say how to apply a file.
type Options struct {
	// DefaultCluster is the cluster (name or ID) of documents that name
	// none, such as the context's.
	DefaultCluster string
	// DryRun plans and writes nothing.
	DryRun bool
	// Prune deletes the pools of the file's clusters that the file does
	// not name; Selector, if any, limits it to the pools it matches.
	Prune    bool
	Selector kpool.Selector
}

// Report is what came of an apply.
type Report struct {
	// Results has one result a document, in file order, then one a pool
	// that prune found.
	Results []Result
	// Wrote says the writes were made: not a dry run, and no result of the
	// plan was refused (a refused plan writes nothing).
	Wrote bool
}

// Refused counts the refused results.
func (r Report) Refused() int {
	n := 0
	for _, x := range r.Results {
		if x.Action == Refused {
			n++
		}
	}
	return n
}

// Run plans docs (see Plan) and, unless o.DryRun or a result of the plan
// is refused, carries the plan out in file order, prune's deletes last.
// A write the server refuses (a change made meanwhile) is reported and the
// others go on. The error is for a request that cannot be planned at all.
func Run(ctx context.Context, c *api.Client, docs []Document, o Options) (Report, error) {
	items, results, err := Plan(ctx, c, docs, o)
	rep := Report{Results: results}
	if err != nil || o.DryRun || rep.Refused() > 0 {
		return rep, err
	}
	for i, it := range items {
		rep.Results[i] = it.write(ctx, c, results[i])
	}
	rep.Wrote = true
	return rep, nil
}

// Plan resolves docs (see Resolve), finds with o.Prune the pools to
// delete, and asks the server for the dry run of every write. It writes
// nothing. The items and their planned results are in the same order.
func Plan(ctx context.Context, c *api.Client, docs []Document, o Options) ([]*Item, []Result, error) {
	items := Resolve(ctx, c, docs, o.DefaultCluster)
	if o.Prune {
		pruned, err := pruneItems(ctx, c, items, o.Selector)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, pruned...)
	}
	results := make([]Result, len(items))
	for i, it := range items {
		results[i] = it.plan(ctx, c)
	}
	return items, results, nil
}

// result is the result of it before anything is known of the write.
func (it *Item) result() Result {
	return Result{Document: it.Document.Source, Name: it.Name, ClusterID: it.ClusterID, Cluster: it.Cluster, Live: it.Live}
}

// plan is what writing it would do, as the server's dry run says.
func (it *Item) plan(ctx context.Context, c *api.Client) Result {
	r := it.result()
	switch {
	case it.Err != nil:
		return refuse(r, it.Err)
	case it.Prune && it.Owner != "":
		r.Action, r.NodePool = Skipped, it.Live
		r.Note = fmt.Sprintf("made by logical pool %s, which keeps it: kpool deletes it with its logical pool", it.Owner)
		return r
	case it.Prune:
		if _, err := c.DryRunDeleteNodePool(ctx, it.Live.ID); err != nil {
			return refuse(r, err)
		}
		r.Action, r.NodePool = Delete, it.Live
		return r
	case it.Live == nil:
		d, err := c.DryRunCreateNodePool(ctx, it.createBody())
		if err != nil {
			return refuse(r, err)
		}
		r.Action, r.NodePool, r.Plan = Create, d.NodePool, d.Plan
		return r
	}
	return it.planUpdate(ctx, c, r)
}

// planUpdate plans the patch that brings a live pool to its document.
func (it *Item) planUpdate(ctx context.Context, c *api.Client, r Result) Result {
	b, err := it.patchBody()
	if err != nil {
		return refuse(r, err)
	}
	r.NodePool = it.Live
	if string(b.Spec) == "{}" {
		r.Action = Unchanged
		return r
	}
	d, err := c.DryRunNodePool(ctx, it.Live.ID, b, true)
	if err != nil {
		return refuse(r, err)
	}
	r.NodePool, r.Plan = d.NodePool, d.Plan
	p := d.Plan
	if p == nil {
		p = &kpool.Plan{}
	}
	switch {
	case p.Refusal() != nil:
		r = refuse(r, p.Refusal())
		r.Note = refusalNote(p)
	case len(p.Changes) == 0 && len(r.Differences()) == 0:
		r.Action = Unchanged
	case p.Replaces():
		r.Action = Replace
	default:
		r.Action = Update
	}
	return r
}

// refusalNote says how to get a refused plan through.
func refusalNote(p *kpool.Plan) string {
	for _, ch := range p.Changes {
		if ch.Class == kpool.UpdateNotImplemented {
			return "the provider cannot make the change marked not_implemented: take it out of the file"
		}
	}
	return "the change needs a new pool and the pool's updateStrategy.replacement is Refuse: set spec.updateStrategy.replacement: Surge in the file to have kpool replace the pool without downtime"
}

func refuse(r Result, err error) Result {
	r.Action, r.Error = Refused, asError(err)
	return r
}

// createBody is the request that creates the document's pool.
func (it *Item) createBody() api.NodePoolBody {
	name, cluster := it.Name, it.ClusterID
	return api.NodePoolBody{ID: it.Document.ID, Name: &name, ClusterID: &cluster, Spec: specOf(it.Document)}
}

// patchBody is the merge patch from the live pool to the document, at the
// live pool's resource version.
func (it *Item) patchBody() (api.NodePoolBody, error) {
	live, err := json.Marshal(it.Live.Spec)
	if err != nil {
		return api.NodePoolBody{}, err
	}
	patch, err := MergePatch(live, specOf(it.Document))
	if err != nil {
		return api.NodePoolBody{}, kpool.Invalid("spec", "%v", err)
	}
	return api.NodePoolBody{Spec: patch, ResourceVersion: it.Live.ResourceVersion}, nil
}

// specOf is the document's spec; {} when it has none (the server names
// what is missing).
func specOf(d Document) json.RawMessage {
	if len(bytes.TrimSpace(d.Spec)) == 0 {
		return json.RawMessage("{}")
	}
	return d.Spec
}

// write carries out the planned result of it.
func (it *Item) write(ctx context.Context, c *api.Client, planned Result) Result {
	r := planned
	var err error
	switch planned.Action {
	case Create:
		r.NodePool, err = c.CreateNodePool(ctx, it.createBody())
	case Update, Replace:
		var b api.NodePoolBody
		if b, err = it.patchBody(); err == nil {
			r.NodePool, err = c.UpdateNodePool(ctx, it.Live.ID, b, true)
		}
		if err == nil && r.NodePool.Generation == it.Live.Generation {
			r.Action = Unchanged
		}
	case Delete:
		var p *kpool.NodePool
		if p, _, err = c.DeleteNodePool(ctx, it.Live.ID); err == nil && p != nil {
			r.NodePool = p
		}
	}
	if err != nil {
		r.NodePool = nil
		return refuse(r, err)
	}
	return r
}
