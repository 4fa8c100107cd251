// Package apply brings node pools to what a file declares, through the
// API's Go client: the engine of kpool apply and kpool diff.
//
// Each document of the file is the whole desired state of one node pool
// (Read), found by its name within its cluster (Resolve). The whole file is
// planned first, with the server's dry run of every write (Plan): a pool
// that does not exist is to be created; one that does gets a JSON merge
// patch that sets what the document says and clears every field it leaves
// out (MergePatch), sent at the pool's resource version so that a change
// made meanwhile fails with CONFLICT; with prune, the pools of the file's
// clusters that it no longer names are to be deleted. Only a plan with no
// refusal is carried out (Run), in file order: a file is applied whole or
// not at all.
package apply

import (
	"context"
	"errors"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// Item is one pool of the plan, and what the server has of it.
type Item struct {
	Document Document
	Name     string
	// ClusterID is the cluster's ID; Cluster its name (or, until it is
	// found, the reference the document gives), for people.
	ClusterID string
	Cluster   string
	// Live is the pool as the server has it; nil: not there, to be created.
	Live *kpool.NodePool
	// Err says why the pool cannot be applied; nil: it can.
	Err error
	// Prune marks a pool of the file's clusters that the file does not
	// name: to be deleted. Owner, if set, is the logical pool that made it
	// (and keeps it): such a pool is skipped.
	Prune bool
	Owner string
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
	r := resolver{c: c, clusters: map[string]*kpool.Cluster{}, seen: map[[2]string]bool{}}
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
	clusters map[string]*kpool.Cluster // a cluster reference → the cluster
	seen     map[[2]string]bool        // cluster ID and pool name of each document so far
}

// resolve fills in it and returns why it cannot be applied.
func (r *resolver) resolve(ctx context.Context, it *Item, def string) error {
	d := it.Document
	if d.Name != nil {
		it.Name = *d.Name
	}
	it.Cluster = d.clusterRef(def)
	var fe kpool.FieldErrors
	if it.Name == "" {
		fe.Add("name", "is required: the pool is found by its name within its cluster")
	}
	if it.Cluster == "" {
		fe.Add("cluster_id", noCluster)
	}
	if err := fe.Err(); err != nil {
		return err
	}
	cl, err := clusterOf(ctx, r.c, d, def, r.clusters)
	if err != nil {
		return err
	}
	it.ClusterID, it.Cluster = cl.ID, cl.Name
	key := [2]string{cl.ID, it.Name}
	if r.seen[key] {
		return kpool.Invalid("name", "the file has node pool %q in cluster %s more than once", it.Name, cl.Name)
	}
	r.seen[key] = true
	list, err := r.c.NodePools(ctx, service.ListOptions{ClusterID: cl.ID, Name: it.Name, Limit: kpool.MaxLimit})
	if err != nil {
		return err
	}
	for _, p := range list.NodePools {
		if p.Name == it.Name && p.ClusterID == cl.ID {
			it.Live = p
		}
	}
	if it.Live != nil && d.ID != "" && !strings.EqualFold(d.ID, it.Live.ID) {
		return kpool.Invalid("id", "%s, but node pool %s is %s", d.ID, it.Label(), it.Live.ID)
	}
	return nil
}

const noCluster = "is required: give cluster_id, or cluster with the cluster's name or ID (or use a context with a cluster)"

// clusterRef is the cluster the document names (cluster, else
// cluster_id), or def.
func (d Document) clusterRef(def string) string {
	cid := ""
	if d.ClusterID != nil {
		cid = *d.ClusterID
	}
	return cmpOr(d.Cluster, cid, def)
}

// ClusterOf finds the cluster of a document: its cluster (a name or ID)
// or cluster_id, which must agree when both are given, or def (such as
// the context's) when it names none. kpool nodepool create -f takes its
// cluster so, as apply does.
func ClusterOf(ctx context.Context, c *api.Client, d Document, def string) (*kpool.Cluster, error) {
	if d.clusterRef(def) == "" {
		return nil, kpool.Invalid("cluster_id", noCluster)
	}
	return clusterOf(ctx, c, d, def, map[string]*kpool.Cluster{})
}

// clusterOf is ClusterOf with the clusters found so far (a reference →
// the cluster).
func clusterOf(ctx context.Context, c *api.Client, d Document, def string, known map[string]*kpool.Cluster) (*kpool.Cluster, error) {
	ref := d.clusterRef(def)
	cl, ok := known[ref]
	if !ok {
		id, err := c.ClusterID(ctx, ref)
		if err != nil {
			return nil, err
		}
		cl, err = c.Cluster(ctx, id)
		var e *kpool.Error
		if errors.As(err, &e) && e.Code == kpool.CodeNotFound {
			return nil, kpool.Errorf(kpool.CodeNotFound, "No cluster %s: kpool cluster list shows the clusters you can see", ref)
		}
		if err != nil {
			return nil, err
		}
		known[ref] = cl
	}
	if d.ClusterID != nil && *d.ClusterID != "" && d.Cluster != "" && !strings.EqualFold(*d.ClusterID, cl.ID) {
		return nil, kpool.Invalid("cluster", "%q is cluster %s, but cluster_id is %s: give one of the two", d.Cluster, cl.ID, *d.ClusterID)
	}
	return cl, nil
}

// cmpOr is the first of vs that is not "".
func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Action is what apply did, or in a dry run would do, to a pool.
type Action string

// The actions of apply.
const (
	Create    Action = "create"
	Update    Action = "update"
	Replace   Action = "replace" // an update the pool's updateStrategy carries out with a new pool (Surge)
	Delete    Action = "delete"  // --prune: a pool the file no longer names
	Unchanged Action = "unchanged"
	Skipped   Action = "skipped" // --prune: a pool owned by a logical pool, left to it
	Refused   Action = "refused" // the document is invalid, or the server would refuse the write
)

// Result is what apply did (or, in a dry run, would do) to one pool: the
// shape of kpool apply -o json.
type Result struct {
	// Document is where the file has the pool ("document 2"); "" for a
	// pool --prune found.
	Document  string `json:"document,omitempty"`
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
	// Note says more for people: how a refusal is fixed, why a pool is
	// skipped.
	Note string `json:"note,omitempty"`
	// Live is the pool before (nil for a create).
	Live *kpool.NodePool `json:"-"`
}

// Label names the pool for people: "web in cluster prod".
func (r Result) Label() string { return label(r.Name, r.Cluster) }

// Changes reports whether the result changes the pool.
func (r Result) Changes() bool {
	switch r.Action {
	case Create, Update, Replace, Delete:
		return true
	}
	return false
}

// Blocked reports whether the pool was refused for its plan alone: a
// change that needs a new pool under replacement Refuse, or one the
// provider cannot make. The document itself is sound.
func (r Result) Blocked() bool {
	return r.Action == Refused && r.Plan != nil && r.Plan.Refusal() != nil
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
