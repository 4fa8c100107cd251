package provider

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// Who may use a credential, when they choose it and whenever it is used.

// GroupPrefix starts an entry of a credential's users that grants it to
// everyone in a group: group:NAME; TeamPrefix one that grants it to a
// team's admins, for the team's clusters: team:NAME.
const (
	GroupPrefix = "group:"
	TeamPrefix  = "team:"
)

// GrantAdmin is the basis of a grant to an admin, who may use every
// credential.
const GrantAdmin = "admin"

// Granted reports whether id may use the credential for a cluster of team
// ("": none): admins may use every one; others if it is granted to
// everyone, their address, one of their groups, or the cluster's team and
// they are its admin.
func (c *Credential) Granted(id *kpool.Identity, team string) bool { return c.grantOf(id, team) != "" }

// grantOf returns the entry of users that grants id the credential for a
// cluster of team ("" when none does): what the cluster records as the
// grant's basis.
func (c *Credential) grantOf(id *kpool.Identity, team string) string {
	email := strings.ToLower(id.Email)
	switch {
	case id.Admin:
		return GrantAdmin
	case c.users[Any]:
		return Any
	case c.users[email]:
		return email
	case team != "" && c.teams[team] && id.Role(team) == kpool.TeamAdmin:
		return TeamPrefix + team
	}
	for _, g := range id.Groups {
		if c.groups[g] {
			return GroupPrefix + g
		}
	}
	return ""
}

// holds reports whether the grant a cluster recorded (basis, for cl's
// team) still stands. A cluster registered before grants were recorded
// ("") holds until its credential is chosen again: who granted it then
// (an admin? which groups?) is not known outside that request.
func (c *Credential) holds(basis string, cl *kpool.Cluster) bool {
	switch {
	case basis == GrantAdmin, basis == "":
		return true
	case basis == Any:
		return c.users[Any]
	case strings.HasPrefix(basis, TeamPrefix):
		t := strings.TrimPrefix(basis, TeamPrefix)
		return t == cl.Team && c.teams[t]
	case strings.HasPrefix(basis, GroupPrefix):
		return c.groups[strings.TrimPrefix(basis, GroupPrefix)]
	}
	return c.users[basis]
}

// Grant implements kpool.CredentialGrants: the credential must exist, be
// granted to id (admins: every one) and fit the cluster; it returns the
// entry that grants it. To a user, a name that does not exist answers as
// one not granted, so that names cannot be probed.
func (s *CredentialSet) Grant(id *kpool.Identity, team string, spec *kpool.ClusterSpec) (string, error) {
	c, name, err := s.lookup(spec)
	if c == nil && err == nil {
		return "", nil // no credential for the platform: its drivers need none here
	}
	basis := ""
	if err == nil {
		basis = c.grantOf(id, team)
	}
	if basis == "" {
		what := fmt.Sprintf("no credential %q is available to you", name)
		switch {
		case err != nil && id.Admin:
			what = err.Error()
		case spec.Credential == "":
			what = fmt.Sprintf("the default credential for %s (%q) is not granted to you; name one that is in spec.credential", spec.Platform.Type, name)
		}
		return "", forbidden("spec.credential", what)
	}
	if field, why := c.fits(spec); field != "" {
		return "", forbidden(field, why)
	}
	return basis, nil
}

// Holds implements kpool.CredentialGrants.
func (s *CredentialSet) Holds(cl *kpool.Cluster) error {
	c, _, err := s.lookup(&cl.Spec)
	if c == nil || err != nil {
		return nil // Resolve and Grant say what is wrong with those
	}
	if c.holds(cl.Grant, cl) {
		return nil
	}
	return forbidden("spec.credential", fmt.Sprintf("credential %q is no longer granted to the cluster's owner or team (granted by %s when chosen); the operator took it away: choose another one", c.Name, grantWord(cl.Grant)))
}

func grantWord(basis string) string {
	switch basis {
	case Any:
		return "its grant to everyone"
	case GrantAdmin:
		return "an admin"
	}
	return basis
}

func forbidden(field, reason string) error {
	return &kpool.Error{Code: kpool.CodeForbidden, Message: "Credential not allowed", Details: field + ": " + reason,
		Fields: []kpool.FieldError{{Field: field, Reason: reason}}}
}
