package gke

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The credentials of GKE clusters: Google's public endpoints, the project
// they are scoped to, and the kind of credential GKE takes besides the
// default chain.

// CredentialServiceAccount is a service account's key (Google Cloud's JSON
// key file), read from secretEnv (the key itself) or secretFile (the key
// file's path) when the driver first needs it.
const CredentialServiceAccount = "service-account"

// CredentialKinds: a service account key.
func (Profile) CredentialKinds() []provider.CredentialKind {
	return []provider.CredentialKind{{Name: CredentialServiceAccount, Noun: "service account key", Secrets: []string{"secret"}}}
}

// PublicEndpoints are Google's public APIs the driver calls: GKE's, and
// Compute Engine's (a node pool's instance groups, which hold its node
// counts) under both of its hosts.
func (Profile) PublicEndpoints() []string {
	return []string{"https://container.googleapis.com", "https://compute.googleapis.com", "https://www.googleapis.com"}
}

// Scope is the cluster's project: what Google Cloud credentials are
// scoped to.
func (Profile) Scope(s *kpool.ClusterSpec) (field, id, word string) {
	if g := s.Platform.GCP; g != nil {
		return "spec.platform.gcp.projectId", g.ProjectID, "project"
	}
	return "spec.platform.gcp.projectId", "", "project"
}
