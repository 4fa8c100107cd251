package kpool

// Level is what a caller asks to do with a cluster or its pools.
type Level int

const (
	// Read: see the cluster, its pools, their status and events.
	Read Level = iota
	// Operate: also create, change and delete the cluster's pools.
	Operate
	// Manage: also change and delete the cluster itself.
	Manage
)

// Role is the team role a level needs.
func (l Level) Role() TeamRole {
	switch l {
	case Operate:
		return TeamOperator
	case Manage:
		return TeamAdmin
	}
	return TeamViewer
}

func (l Level) String() string {
	switch l {
	case Operate:
		return "change its node pools"
	case Manage:
		return "change or delete the cluster"
	}
	return "read it"
}

// May reports whether the caller sees a cluster of owner and team, and
// whether it may act on it at level l. Admins may do everything;
// controllers read everything; the owner may do everything with its
// cluster; a team member what its role allows.
func (id *Identity) May(owner, team string, l Level) (seen, allowed bool) {
	switch {
	case id.Admin || id.Owns(owner):
		return true, true
	case id.Controller:
		return true, l == Read
	}
	r := id.Role(team)
	return r != "", r.Allows(l.Role())
}

// Sees reports whether the caller may read a cluster of owner and team,
// and its pools and events.
func (id *Identity) Sees(owner, team string) bool {
	seen, _ := id.May(owner, team, Read)
	return seen
}
