// Package placement turns an app's pool and zone intent into Kubernetes
// scheduling on its workloads, as the ADR asks of the converter: the
// kompox.dev/node-pool and kompox.dev/node-zone node selectors, one required
// node-affinity term for several pools or zones, and tolerations of the
// pools' taints. Given a cluster, it checks the intent against the cluster's
// pools first, so that a pod is never sent to a pool that does not exist, a
// zone the pool is not in, or a tainted pool it cannot tolerate.
package placement

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The annotations a workload states its intent with; the plural ones take
// comma-separated values.
const (
	AnnotationPool  = "kompox.dev/pool"
	AnnotationZone  = "kompox.dev/zone"
	AnnotationPools = "kompox.dev/pools"
	AnnotationZones = "kompox.dev/zones"
)

// DefaultPool is where a workload goes when nothing says otherwise: the
// ADR keeps Kompox's behaviour of placing apps on the user pool.
const DefaultPool = "user"

// Intent says which pools and zones pods should run in. Pool and Pools are
// exclusive, and so are Zone and Zones.
type Intent struct {
	Pool  string   `json:"pool,omitempty"`
	Pools []string `json:"pools,omitempty"`
	Zone  string   `json:"zone,omitempty"`
	Zones []string `json:"zones,omitempty"`
}

// Empty reports whether the intent says nothing.
func (i Intent) Empty() bool {
	return i.Pool == "" && len(i.Pools) == 0 && i.Zone == "" && len(i.Zones) == 0
}

// Options say how to place a set of manifests.
type Options struct {
	// Intent is the caller's (command line or API request). It comes before
	// a workload's annotations, which come before App.
	Intent Intent
	// App is the app file's spec.deployment, the lowest in precedence.
	App Intent
	// AppName names the app file in messages.
	AppName string
	// DefaultPool is the pool of a workload that no source gives one and
	// that selects none already; "" places such workloads on no pool.
	DefaultPool string
	// Cluster, when set, is checked against: the pools and zones named must
	// exist, and the pools' taints are tolerated.
	Cluster *Cluster
	// NoTolerations leaves the workloads' tolerations as they are.
	NoTolerations bool
}

// Cluster is a cluster with its node pools.
type Cluster struct {
	Cluster *kpool.Cluster
	Pools   []*kpool.NodePool
	// Profile is the cluster's platform: its zones, node labels and the
	// taints its provider adds.
	Profile provider.Profile

	views []*pool // Pools as placement sees them, worked out once per Place
}

// Result is the placed manifests and what is worth knowing about them.
type Result struct {
	// Manifests are the input documents in their order, as YAML: workloads
	// placed, every other document as it came.
	Manifests string `json:"manifests"`
	// Placed counts the workloads placed.
	Placed   int       `json:"placed"`
	Warnings []Warning `json:"warnings"`
}

// Warning is something a person should look at that does not stop the
// placement, such as a pool that is not Ready.
type Warning struct {
	Document int    `json:"document"`
	Object   string `json:"object"`
	Message  string `json:"message"`
}

func (w Warning) String() string {
	return fmt.Sprintf("document %d, %s: %s", w.Document, w.Object, w.Message)
}

// Place places the workloads of manifests (YAML or JSON documents) by the
// options. Errors are a *kpool.Error (VALIDATION_ERROR) naming each document
// and field at fault; nothing is returned with them.
func Place(manifests []byte, o Options) (*Result, error) {
	var fe kpool.FieldErrors
	check(&fe, "", requestSource(o.Intent))
	check(&fe, "", appSource(o.App, o.AppName))
	if o.DefaultPool != "" {
		checkValues(&fe, "default_pool", []string{o.DefaultPool})
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	chunks, tail, err := split(manifests)
	if err != nil {
		return nil, err
	}
	if o.Cluster != nil {
		o.Cluster = o.Cluster.withViews()
	}
	res := &Result{Warnings: []Warning{}}
	var out strings.Builder
	var bad kpool.FieldErrors // documents that do not decode: then nothing is placed
	newline := true           // out ends a line
	for i, c := range chunks {
		d, ok := decode(i+1, c, &bad)
		if !ok || len(bad) > 0 {
			continue
		}
		text, err := d.place(o, &fe, res)
		if err != nil {
			return nil, err
		}
		// Every byte around the documents stays as it came: separators
		// with their comments, line endings.
		lead := d.lead
		if i > 0 && lead == "" {
			lead = "---\n" // cannot happen: documents after the first follow a separator
		}
		if i > 0 && !newline {
			out.WriteString("\n")
		}
		out.WriteString(lead + text)
		newline = strings.HasSuffix(lead+text, "\n")
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	out.WriteString(tail)
	res.Manifests = out.String()
	return res, nil
}

// appField is the prefix of an app file's fields in messages.
func appField(name string) string {
	if name == "" {
		return "app: spec.deployment."
	}
	return name + ": spec.deployment."
}
