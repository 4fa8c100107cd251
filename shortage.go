package kpool

import "time"

// Shortage is a cloud's word that it could not start a pool's nodes for
// want of capacity (a zone's machine type, spot capacity ran out): the pool
// has fewer nodes than it asks for until capacity returns or it asks for
// less. Not the account's quota, not the spec's fault.
type Shortage struct {
	// Code and Message are the cloud's (ZonalAllocationFailed,
	// InsufficientInstanceCapacity, ZONE_RESOURCE_POOL_EXHAUSTED, …).
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Zones are the logical zones the cloud named as short (empty: the
	// pool's zones).
	Zones []string `json:"zones,omitempty"`
	// Since is when kpool first saw it; Nodes and Wanted the nodes the
	// pool had and asked for when it last looked.
	Since  time.Time `json:"since"`
	Nodes  int       `json:"nodes"`
	Wanted int       `json:"wanted"`
	// TriedAt is when kpool last asked the cloud again for the missing
	// nodes: a pool short of capacity is asked again slowly, not at every
	// pass.
	TriedAt *time.Time `json:"triedAt,omitempty"`
}
