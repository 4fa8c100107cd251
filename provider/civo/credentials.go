package civo

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The credentials of Civo clusters: Civo's public API, the region they are
// scoped to, and the kind of credential Civo takes besides the default
// (CIVO_TOKEN in kpool's environment).

// CredentialAPIKey is a Civo API key, read from secretEnv (the key itself)
// or secretFile when the driver first needs it.
const CredentialAPIKey = "api-key"

// CredentialKinds: an API key.
func (Profile) CredentialKinds() []provider.CredentialKind {
	return []provider.CredentialKind{{Name: CredentialAPIKey, Noun: "API key", Secrets: []string{"secret"}}}
}

// PublicEndpoint is Civo's API.
const PublicEndpoint = "https://api.civo.com"

// PublicEndpoints is Civo's API: where a credential that names no
// endpoints may be sent.
func (Profile) PublicEndpoints() []string { return []string{PublicEndpoint} }

// Scope is the cluster's region: a Civo API key is its account's, and the
// one thing a Civo cluster spec says of where it is, is its region.
func (Profile) Scope(s *kpool.ClusterSpec) (field, id, word string) {
	const f = "spec.platform.civo.region"
	if c := s.Platform.Civo; c != nil {
		return f, c.Region, "region"
	}
	return f, "", "region"
}
