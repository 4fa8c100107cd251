package provider

import (
	"fmt"

	"github.com/kpool/kpool"
)

// A cluster's kubeconfig credential (spec.kubeconfig): the operator's
// kubeconfig of the cluster's Kubernetes API, used instead of the access
// its driver gets from the cloud.

// Kubeconfigs resolve the kubeconfig credential a cluster names: kpool's
// Kubernetes clients call it before each use, as drivers call Resolve.
type Kubeconfigs interface {
	// Kubeconfig returns the credential spec.kubeconfig names, nil when it
	// names none, or a validation error naming spec.kubeconfig.
	Kubeconfig(c *kpool.Cluster) (*Credential, error)
}

var _ Kubeconfigs = (*CredentialSet)(nil)

// kubeconfigOf finds the kubeconfig credential spec names and checks it
// is one, of the cluster's platform, usable for its scope; nil when spec
// names none.
func (s *CredentialSet) kubeconfigOf(spec *kpool.ClusterSpec) (*Credential, error) {
	name := spec.Kubeconfig
	if name == "" {
		return nil, nil
	}
	c, ok := s.byName[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("no credential named %q is configured", name)
	case c.Type != spec.Platform.Type:
		return nil, fmt.Errorf("credential %q is for %s, not %s", name, c.Type, spec.Platform.Type)
	case c.Kind != CredentialKubeconfig:
		return nil, fmt.Errorf("credential %q is not a kubeconfig (its kind is %s)", name, c.Kind)
	}
	return c, nil
}

// scopeFits returns why the kubeconfig may not be used for the cluster's
// subscription, account, project or compartment ("": it may).
func (c *Credential) scopeFits(spec *kpool.ClusterSpec) string {
	if f, id, word := c.profile.Scope(spec); f != "" && !c.AllowsScope(id) {
		return fmt.Sprintf("credential %q may not be used for %s %q", c.Name, word, id)
	}
	return ""
}

// Kubeconfig implements Kubeconfigs.
func (s *CredentialSet) Kubeconfig(cl *kpool.Cluster) (*Credential, error) {
	c, err := s.kubeconfigOf(&cl.Spec)
	switch {
	case err != nil:
		return nil, ValidationError(cl.Spec.Platform.Type, "spec.kubeconfig", "%v", err)
	case c == nil:
		return nil, nil
	}
	if why := c.scopeFits(&cl.Spec); why != "" {
		return nil, ValidationError(cl.Spec.Platform.Type, "spec.kubeconfig", "%s", why)
	}
	if !c.holds(cl.KubeconfigGrant, cl) {
		return nil, ValidationError(cl.Spec.Platform.Type, "spec.kubeconfig", "credential %q is no longer granted to the cluster's owner or team (granted by %s when chosen)", c.Name, grantWord(cl.KubeconfigGrant))
	}
	return c, nil
}

// GrantKubeconfig implements kpool.CredentialGrants: the kubeconfig spec
// names must be one of its platform, granted to id for a cluster of team
// (admins: every one) and usable for the cluster's scope; it returns the
// entry that grants it. To a user, a name that is not such an entry
// answers as one not granted, so that names cannot be probed.
func (s *CredentialSet) GrantKubeconfig(id *kpool.Identity, team string, spec *kpool.ClusterSpec) (string, error) {
	c, err := s.kubeconfigOf(spec)
	basis := ""
	if c != nil {
		basis = c.grantOf(id, team)
	}
	switch {
	case c == nil && err == nil:
		return "", nil
	case err != nil && id.Admin:
		return "", forbidden("spec.kubeconfig", err.Error())
	case basis == "":
		return "", forbidden("spec.kubeconfig", fmt.Sprintf("no kubeconfig %q of %s is available to you", spec.Kubeconfig, spec.Platform.Type))
	}
	if why := c.scopeFits(spec); why != "" {
		return "", forbidden("spec.kubeconfig", why)
	}
	return basis, nil
}
