package aks

import (
	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The credentials of AKS clusters: ARM's public endpoint, the
// subscription they are scoped to, and the kind of credential AKS takes
// besides the default chain.

// CredentialClientSecret is an Entra ID application's id and secret (a
// service principal of tenantId), the secret read from secretEnv or
// secretFile when the driver first needs it, sent for tokens to authority
// (Entra ID's public authority host when unset).
const CredentialClientSecret = "client-secret"

// CredentialKinds: a client secret.
func (Profile) CredentialKinds() []provider.CredentialKind {
	return []provider.CredentialKind{{Name: CredentialClientSecret, Noun: "client secret",
		Required: []string{"tenantId", "clientId"}, Secrets: []string{"secret"}, Optional: []string{"authority"},
		Check: func(fe *kpool.FieldErrors, c *provider.Credential) {
			if a := c.Settings["authority"]; a != "" {
				if _, err := kpool.ParseOrigins([]string{a}); err != nil {
					fe.Add("authority", "%v", err)
				}
			}
		}}}
}

// AuthorityHost is the origin of a client-secret credential's authority
// with a trailing slash, as azidentity takes it; "" for the public one.
func AuthorityHost(c *provider.Credential) string {
	a := c.Settings["authority"]
	if a == "" {
		return ""
	}
	o, err := kpool.Origin(a)
	if err != nil {
		return "" // refused when the credential was read
	}
	return o + "/"
}

// PublicEndpoints is public ARM: where a credential that names no endpoints
// may be sent.
func (Profile) PublicEndpoints() []string { return []string{"https://management.azure.com"} }

// Scope is the cluster's subscription: what Azure credentials are scoped to.
func (Profile) Scope(s *kpool.ClusterSpec) (field, id, word string) {
	if a := s.Platform.Azure; a != nil {
		return "spec.platform.azure.subscriptionId", a.SubscriptionID, "subscription"
	}
	return "spec.platform.azure.subscriptionId", "", "subscription"
}
