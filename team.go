package kpool

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// TeamRole is what a member of a team may do with the team's clusters.
type TeamRole string

const (
	// TeamViewer reads the team's clusters, pools, status and events.
	TeamViewer TeamRole = "viewer"
	// TeamOperator also creates, changes and deletes the team's pools.
	TeamOperator TeamRole = "operator"
	// TeamAdmin also changes and deletes the team's clusters, puts
	// clusters in the team and uses the credentials granted to it.
	TeamAdmin TeamRole = "admin"
)

// TeamRoles lists the roles, from the least to the most allowed.
var TeamRoles = []TeamRole{TeamViewer, TeamOperator, TeamAdmin}

// Allows reports whether the role includes what want allows.
func (r TeamRole) Allows(want TeamRole) bool {
	have, need := slices.Index(TeamRoles, r), slices.Index(TeamRoles, want)
	return have >= 0 && need >= 0 && have >= need
}

var teamName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$`)

// ParseTeam checks a team's name: 1-63 lowercase letters, digits, '-', '_'
// and '.', starting and ending with a letter or digit (so that TEAM:ROLE
// reads one way).
func ParseTeam(s string) (string, error) {
	if !teamName.MatchString(s) {
		return "", fmt.Errorf("%q is not a team name: 1-63 lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit", s)
	}
	return s, nil
}

// ParseMembership reads a group that grants a team role, TEAM:ROLE (such
// as platform:operator); ok is false for any other group.
func ParseMembership(group string) (team string, role TeamRole, ok bool) {
	t, r, found := strings.Cut(group, ":")
	if !found || !slices.Contains(TeamRoles, TeamRole(r)) {
		return "", "", false
	}
	if _, err := ParseTeam(t); err != nil {
		return "", "", false
	}
	return t, TeamRole(r), true
}

// Role returns the caller's role in team: the most allowed of the
// memberships its groups grant ("" when none, or for no team).
func (id *Identity) Role(team string) TeamRole {
	var best TeamRole
	if team == "" {
		return best
	}
	for _, g := range id.Groups {
		if t, r, ok := ParseMembership(g); ok && t == team && (best == "" || r.Allows(best)) {
			best = r
		}
	}
	return best
}

// TeamNames lists the teams the caller is a member of, in any role.
func (id *Identity) TeamNames() []string {
	var out []string
	for _, g := range id.Groups {
		if t, _, ok := ParseMembership(g); ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
