package kpool

import (
	"fmt"
	"slices"
	"strings"
)

// ControllerScope bounds the pools a controller token may report on: those
// of its platforms and, when it names any, only of those clusters or of
// clusters of those teams. A controller granted a name of its own could
// otherwise report on every user's pools: turn Ready pools to Failed, and
// hold their deletes for its Deleted=True.
type ControllerScope struct {
	Platforms []PlatformType `json:"platforms,omitempty"`
	Clusters  []string       `json:"clusters,omitempty"`
	Teams     []string       `json:"teams,omitempty"`
}

// IsZero reports whether the scope bounds nothing (every pool).
func (s *ControllerScope) IsZero() bool {
	return len(s.Platforms) == 0 && len(s.Clusters) == 0 && len(s.Teams) == 0
}

// Check validates the scope of a new controller token.
func (s *ControllerScope) Check(fe *FieldErrors) {
	if len(s.Platforms) == 0 {
		fe.Add("scope.platforms", "required for role controller: the platforms whose pools it reports on")
	}
	for i, c := range s.Clusters {
		if !IsUUID(c) {
			fe.Add(fmt.Sprintf("scope.clusters[%d]", i), "%q is not a cluster id", c)
		}
		s.Clusters[i] = strings.ToLower(c)
	}
	for i, t := range s.Teams {
		if _, err := ParseTeam(t); err != nil {
			fe.Add(fmt.Sprintf("scope.teams[%d]", i), "%v", err)
		}
	}
}

// Covers reports whether the scope takes in a pool of platform t in
// cluster c.
func (s *ControllerScope) Covers(t PlatformType, c *Cluster) bool {
	if !slices.Contains(s.Platforms, t) {
		return false
	}
	if len(s.Clusters) == 0 && len(s.Teams) == 0 {
		return true
	}
	return slices.Contains(s.Clusters, strings.ToLower(c.ID)) || (c.Team != "" && slices.Contains(s.Teams, c.Team))
}

// String says the scope for people: "gcp, aws in clusters 01a2…, teams platform".
func (s *ControllerScope) String() string {
	if s.IsZero() {
		return "every pool"
	}
	var ps []string
	for _, p := range s.Platforms {
		ps = append(ps, string(p))
	}
	out := strings.Join(ps, ", ")
	if len(s.Clusters) > 0 {
		out += " in clusters " + strings.Join(s.Clusters, ", ")
	}
	if len(s.Teams) > 0 {
		out += " of teams " + strings.Join(s.Teams, ", ")
	}
	return out
}
