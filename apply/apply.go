// Package apply brings node pools to what a file declares, through the
// API's Go client: the engine of kpool apply and kpool diff.
//
// Each document of the file is a node pool as the API takes it (Read). A
// pool is found by its name within its cluster (Resolve); one that does not
// exist is created, one that does gets a PUT of the document's spec at its
// current resource version, so that a change made meanwhile fails with
// CONFLICT instead of being overwritten (Item.Apply). A dry run asks the
// server for the plan of each and changes nothing. Pools the file does not
// name are left alone.
package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// Item is one pool of the file and what the server has of it.
type Item struct {
	Document Document
	Name     string
	// ClusterID is the cluster's ID; Cluster the cluster as the document
	// names it (or the default cluster), for people.
	ClusterID string
	Cluster   string
	// Live is the pool as the server has it; nil: not there, to be created.
	Live *kpool.NodePool
	// Err says why the pool cannot be applied; nil: it can.
	Err error
}

// Label names the pool for people: "web in cluster prod".
func (it *Item) Label() string { return label(it.Name, it.Cluster) }

func label(name, cluster string) string {
	if name == "" {
		name = "(no name)"
	}
	if cluster == "" {
		return name
	}
	return name + " in cluster " + cluster
}

// Resolve finds each document's cluster (defaultCluster, such as a
// context's, for a document that names none) and the pool of its name
// there, if any, in the order of docs. A document that cannot be applied
// (no name, no cluster, a cluster not found, the same pool twice) carries
// its error in Item.Err; the others go on.
func Resolve(ctx context.Context, c *api.Client, docs []Document, defaultCluster string) []*Item {
	r := resolver{c: c, clusters: map[string]string{}, seen: map[[2]string]bool{}}
	items := make([]*Item, len(docs))
	for i, d := range docs {
		items[i] = &Item{Document: d}
		items[i].Err = r.resolve(ctx, items[i], defaultCluster)
	}
	return items
}

// resolver resolves the documents of one file.
type resolver struct {
	c        *api.Client
	clusters map[string]string  // a cluster reference → its ID
	seen     map[[2]string]bool // cluster ID and pool name of each document so far
}

// resolve fills in it and returns why it cannot be applied.
func (r *resolver) resolve(ctx context.Context, it *Item, def string) error {
	d := it.Document
	if d.Name != nil {
		it.Name = *d.Name
	}
	cid := ""
	if d.ClusterID != nil {
		cid = *d.ClusterID
	}
	switch {
	case cid != "" && d.Cluster != "" && cid != d.Cluster:
		it.Cluster = d.Cluster // checked against cid below
	case cid != "":
		it.Cluster = cid
	case d.Cluster != "":
		it.Cluster = d.Cluster
	default:
		it.Cluster = def
	}
	var fe kpool.FieldErrors
	if it.Name == "" {
		fe.Add("name", "is required: the pool is found by its name within its cluster")
	}
	if it.Cluster == "" {
		fe.Add("cluster_id", "is required: give cluster_id, or cluster with the cluster's name or ID (or use a context with a cluster)")
	}
	if err := fe.Err(); err != nil {
		return err
	}
	id, ok := r.clusters[it.Cluster]
	if !ok {
		var err error
		if id, err = r.c.ClusterID(ctx, it.Cluster); err != nil {
			return err
		}
		r.clusters[it.Cluster] = id
	}
	if cid != "" && d.Cluster != "" && cid != d.Cluster && !strings.EqualFold(cid, id) {
		return kpool.Invalid("cluster", "%q is cluster %s, but cluster_id is %s: give one of the two", d.Cluster, id, cid)
	}
	it.ClusterID = id
	key := [2]string{id, it.Name}
	if r.seen[key] {
		return kpool.Invalid("name", "the file has node pool %q in cluster %s more than once", it.Name, it.Cluster)
	}
	r.seen[key] = true
	list, err := r.c.NodePools(ctx, service.ListOptions{ClusterID: id, Name: it.Name, Limit: kpool.MaxLimit})
	if err != nil {
		return err
	}
	for _, p := range list.NodePools {
		if p.Name == it.Name && p.ClusterID == id {
			it.Live = p
		}
	}
	if it.Live != nil && d.ID != "" && !strings.EqualFold(d.ID, it.Live.ID) {
		return kpool.Invalid("id", "%s, but node pool %s is %s", d.ID, it.Label(), it.Live.ID)
	}
	return nil
}

// body is the request that brings the pool to the document: a create, or
// a PUT of the document's spec at the live pool's resource version.
func (it *Item) body() api.NodePoolBody {
	spec := it.Document.Spec
	if len(bytes.TrimSpace(spec)) == 0 {
		spec = json.RawMessage("{}") // the server names what is missing
	}
	if it.Live == nil {
		name, cluster := it.Name, it.ClusterID
		return api.NodePoolBody{ID: it.Document.ID, Name: &name, ClusterID: &cluster, Spec: spec}
	}
	return api.NodePoolBody{Spec: spec, ResourceVersion: it.Live.ResourceVersion}
}

// Action is what apply did, or in a dry run would do, to a pool.
type Action string

// The actions of apply.
const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
	Refused   Action = "refused" // the pool could not be resolved, or the server refused the write
)

// Result is what apply did (or, in a dry run, would do) to one pool: the
// shape of kpool apply -o json.
type Result struct {
	Name      string `json:"name"`
	ClusterID string `json:"cluster_id,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	Action    Action `json:"action"`
	// NodePool is the pool after the write (in a dry run, as it would be).
	NodePool *kpool.NodePool `json:"nodepool,omitempty"`
	// Plan is the dry run's plan: each changed field and its class at the
	// provider.
	Plan  *kpool.Plan  `json:"plan,omitempty"`
	Error *kpool.Error `json:"error,omitempty"`
	// Live is the pool before (nil for a create).
	Live *kpool.NodePool `json:"-"`
}

// Label names the pool for people: "web in cluster prod".
func (r Result) Label() string { return label(r.Name, r.Cluster) }

// Apply sends the item's request, or with dryRun its dry run, and says
// what came of it. A refusal is a result, not an error: every pool of a
// file is tried.
func (it *Item) Apply(ctx context.Context, c *api.Client, dryRun bool) Result {
	r := Result{Name: it.Name, ClusterID: it.ClusterID, Cluster: it.Cluster, Live: it.Live}
	refuse := func(err error) Result {
		r.Action, r.Error = Refused, asError(err)
		return r
	}
	if it.Err != nil {
		return refuse(it.Err)
	}
	if it.Live != nil && len(bytes.TrimSpace(it.Document.Spec)) == 0 {
		return refuse(kpool.Invalid("spec", "is required: apply PUTs the file's spec to the pool"))
	}
	b := it.body()
	switch {
	case dryRun:
		var d *api.DryRun
		var err error
		if it.Live == nil {
			d, err = c.DryRunCreateNodePool(ctx, b)
		} else {
			d, err = c.DryRunNodePool(ctx, it.Live.ID, b, false)
		}
		if err != nil {
			return refuse(err)
		}
		r.NodePool, r.Plan = d.NodePool, d.Plan
		r.Action = it.planned(d.Plan)
		if r.Action == Update && d.Plan.Refusal() != nil { // the real write would be refused
			r.Action, r.Error = Refused, asError(d.Plan.Refusal())
		}
	case it.Live == nil:
		p, err := c.CreateNodePool(ctx, b)
		if err != nil {
			return refuse(err)
		}
		r.Action, r.NodePool = Create, p
	default:
		p, err := c.UpdateNodePool(ctx, it.Live.ID, b, false)
		if err != nil {
			return refuse(err)
		}
		r.Action, r.NodePool = Update, p
		if p.Generation == it.Live.Generation {
			r.Action = Unchanged
		}
	}
	return r
}

// planned is the action a dry run's plan says the write would be.
func (it *Item) planned(p *kpool.Plan) Action {
	switch {
	case it.Live == nil:
		return Create
	case p == nil || len(p.Changes) == 0:
		return Unchanged
	}
	return Update
}

// Run resolves docs (see Resolve) and applies each, in order, with dryRun
// for the plans alone.
func Run(ctx context.Context, c *api.Client, docs []Document, defaultCluster string, dryRun bool) []Result {
	items := Resolve(ctx, c, docs, defaultCluster)
	results := make([]Result, len(items))
	for i, it := range items {
		results[i] = it.Apply(ctx, c, dryRun)
	}
	return results
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
