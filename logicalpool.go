package kpool

import (
	"fmt"
	"time"
)

// LogicalPool is a placement name apps select (kompox.dev/node-pool) and
// the capacity behind it: kpool keeps its node count over member pools it
// makes, one per zone and offering, and moves nodes to the next fallback
// when an offering runs out (a zone's machine type, spot), back when it
// returns. Pools that name it in spec.placementPool are members too; kpool
// lists and counts them but never scales them.
type LogicalPool struct {
	ID                string     `json:"id"`
	Name              string     `json:"name"`
	ClusterID         string     `json:"cluster_id"`
	Generation        int64      `json:"generation"`
	ResourceVersion   string     `json:"resource_version"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	CreatedBy         string     `json:"created_by,omitempty"`
	DeletionTimestamp *time.Time `json:"deletion_timestamp,omitempty"`
	// ClusterOwner and ClusterTeam are the cluster's, read with the row
	// for access checks; never stored with the logical pool.
	ClusterOwner string `json:"-"`
	ClusterTeam  string `json:"-"`

	Spec   LogicalPoolSpec   `json:"spec"`
	Status LogicalPoolStatus `json:"status"`
}

// LogicalPoolSpec is the desired capacity of a logical pool.
type LogicalPoolSpec struct {
	// NodeCount is the total over the members it makes; with Autoscaling
	// the bounds are split over them instead.
	NodeCount   *int         `json:"nodeCount,omitempty"`
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	// Template is every member's spec: its platform block (machine type,
	// spot), its zones (the preferred layout: the count spread evenly),
	// labels, taints, mode, version, tags and update strategy. Its
	// nodeCount, autoscaling and placementPool are the logical pool's to
	// set and must be left out.
	Template NodePoolSpec `json:"template"`
	// Fallbacks are the alternatives, in order, that take the nodes an
	// offering of the template cannot get: each the template with another
	// machine type, other zones, or spot turned off.
	Fallbacks []Fallback `json:"fallbacks,omitempty"`
	// Capacity says how long an offering that ran out is left alone and how
	// often nodes may move (nil: the defaults).
	Capacity *CapacityPolicy `json:"capacity,omitempty"`
}

// Fallback is one alternative of a logical pool: the template with these
// fields changed. An empty field keeps the template's.
type Fallback struct {
	MachineType string   `json:"machineType,omitempty"`
	Zones       []string `json:"zones,omitempty"`
	// Spot false is on-demand: the fallback of a spot template.
	Spot *bool `json:"spot,omitempty"`
}

// CapacityPolicy tunes the moves of a logical pool. Durations are Go
// durations ("3m").
type CapacityPolicy struct {
	// UnavailableFor is how long an offering that ran out is not asked for
	// more nodes (default 3m, as Karpenter's unavailable offerings cache);
	// each time it runs out again the time doubles, up to 1h.
	UnavailableFor string `json:"unavailableFor,omitempty"`
	// MinMoveInterval is the least time between two moves of nodes back to
	// a preferred offering (default 1m): no flapping.
	MinMoveInterval string `json:"minMoveInterval,omitempty"`
}

// Capacity policy defaults and bounds.
const (
	DefaultUnavailableFor  = 3 * time.Minute
	MaxUnavailableFor      = time.Hour
	DefaultMinMoveInterval = time.Minute
)

// Durations returns the policy's durations, defaults filled in; the
// policy must have been validated.
func (c *CapacityPolicy) Durations() (unavailableFor, minMove time.Duration) {
	unavailableFor, minMove = DefaultUnavailableFor, DefaultMinMoveInterval
	if c == nil {
		return
	}
	if d, err := time.ParseDuration(c.UnavailableFor); err == nil && c.UnavailableFor != "" {
		unavailableFor = d
	}
	if d, err := time.ParseDuration(c.MinMoveInterval); err == nil && c.MinMoveInterval != "" {
		minMove = d
	}
	return
}

// Offering is where a logical pool's nodes can run: a logical zone ("" for
// a pool without zones), a machine type, spot or on-demand.
type Offering struct {
	Zone        string `json:"zone,omitempty"`
	MachineType string `json:"machineType"`
	Spot        bool   `json:"spot,omitempty"`
}

func (o Offering) String() string {
	s := o.MachineType
	if o.Spot {
		s += " (spot)"
	}
	if o.Zone != "" {
		s = "zone " + o.Zone + " " + s
	}
	return s
}

// LogicalPoolStatus is what the logical pool controller last saw and did.
type LogicalPoolStatus struct {
	ObservedGeneration int64 `json:"observedGeneration"`
	// NodeCount is the total the members are asked for; ReadyNodes the
	// members' Ready nodes, joined members included.
	NodeCount  int `json:"nodeCount"`
	ReadyNodes int `json:"readyNodes"`
	// Members are the pools of the logical pool.
	Members []LogicalMember `json:"members,omitempty"`
	// Unavailable are the offerings that ran out, until when they are left
	// alone.
	Unavailable []UnavailableOffering `json:"unavailable,omitempty"`
	// LastMoveAt is when nodes last moved between offerings.
	LastMoveAt *time.Time `json:"lastMoveAt,omitempty"`
	// Message says in one line what is short and where the nodes run
	// instead ("zone 2 out of D8s_v5 since 10:32; 3 nodes in zone 3
	// instead"); empty when the preferred layout holds.
	Message        string      `json:"message,omitempty"`
	Conditions     []Condition `json:"conditions,omitempty"`
	LastUpdateTime time.Time   `json:"lastUpdateTime"`
}

// LogicalMember is one member pool of a logical pool.
type LogicalMember struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Offering
	// Made is true for a pool the logical pool made (and scales); false
	// for one that joined it through spec.placementPool.
	Made bool `json:"made"`
	// Alternative is the offering's rank: 0 the template, k its k-th
	// fallback.
	Alternative int   `json:"alternative"`
	NodeCount   int   `json:"nodeCount"`
	ReadyNodes  int   `json:"readyNodes"`
	Phase       Phase `json:"phase"`
}

// UnavailableOffering is an offering that ran out.
type UnavailableOffering struct {
	Offering
	// Since is when it first ran out; Until when it is next tried.
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Times is how often in a row it ran out (the wait doubles each time).
	Times int `json:"times"`
	// Code and Message are the cloud's.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// LogicalPoolFilter selects logical pools.
type LogicalPoolFilter struct {
	Owner     string
	Teams     []string
	ClusterID string
	Name      string
	// Labels selects the logical pools whose spec.template.labels (their
	// members' labels) it matches.
	Labels Selector
	Page
}

// Events of logical pools.
const (
	EventLogicalPoolCreated = "logicalpool.created"
	EventLogicalPoolUpdated = "logicalpool.updated"
	EventLogicalPoolDeleted = "logicalpool.deleted"
	EventLogicalPoolMoved   = "logicalpool.moved"
)

// MemberName is the name of the member a logical pool makes for an
// offering: NAME-ZONE for the template's, NAME-ZONE-fK for its k-th
// fallback (NAME-fK without zones). Names follow from the offering's rank,
// so a controller that crashed after a create finds the member it made
// rather than making another.
func (lp *LogicalPool) MemberName(zone string, alternative int) string {
	n := lp.Name
	if zone != "" {
		n += "-" + zone
	}
	if alternative > 0 {
		n += fmt.Sprintf("-f%d", alternative)
	}
	return n
}

// Alternative is one rank of a logical pool's offerings: the template's
// (Rank 0) or a fallback's, one offering per zone (a single one with no
// zone for a pool without zones).
type Alternative struct {
	Rank      int
	Offerings []Offering
}

// Alternatives lists a logical pool's offerings in the order it takes
// them: the template's, then each fallback's. A fallback's empty fields are
// the template's; ps reads the machine type and spot from the template's
// platform block.
func (s *LogicalPoolSpec) Alternatives(ps Platforms, c *Cluster) []Alternative {
	base := ps.Offering(c, &s.Template)
	alt := func(rank int, mt string, zones []string, spot bool) Alternative {
		a := Alternative{Rank: rank}
		if len(zones) == 0 {
			a.Offerings = []Offering{{MachineType: mt, Spot: spot}}
		}
		for _, z := range zones {
			a.Offerings = append(a.Offerings, Offering{Zone: z, MachineType: mt, Spot: spot})
		}
		return a
	}
	out := []Alternative{alt(0, base.MachineType, s.Template.Zones, base.Spot)}
	for i, f := range s.Fallbacks {
		mt, zones, spot := base.MachineType, s.Template.Zones, base.Spot
		if f.MachineType != "" {
			mt = f.MachineType
		}
		if len(f.Zones) > 0 {
			zones = f.Zones
		}
		if f.Spot != nil {
			spot = *f.Spot
		}
		out = append(out, alt(i+1, mt, zones, spot))
	}
	return out
}
