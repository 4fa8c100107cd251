package oke

import (
	"regexp"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// The credentials of OKE clusters: the regional public endpoints, the
// compartment they are scoped to, and the kind of credential OKE takes
// besides the default chain (the OCI config file, instance principals).

// CredentialAPIKey is an OCI API signing key: tenantId the tenancy OCID,
// clientId the user OCID, fingerprint the key's fingerprint, the PEM read
// from secretEnv (the key itself) or secretFile when the driver first
// needs it.
const CredentialAPIKey = "api-key"

// CredentialKinds: an API signing key, which names its tenancy, user and
// fingerprint.
func (Profile) CredentialKinds() []provider.CredentialKind {
	return []provider.CredentialKind{{Name: CredentialAPIKey, Noun: "API key",
		Required: []string{"tenantId", "clientId", "fingerprint"}, Secrets: []string{"secret"},
		Check: func(fe *kpool.FieldErrors, c *provider.Credential) {
			ocid(fe, "tenantId", c.Settings["tenantId"], true, "tenancy")
			ocid(fe, "clientId", c.Settings["clientId"], true, "user")
			if !fingerprintRE.MatchString(c.Settings["fingerprint"]) {
				fe.Add("fingerprint", "required: the API key's fingerprint (16 hex pairs separated by ':')")
			}
		}}}
}

var fingerprintRE = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){15}$`)

// Regions are the OCI commercial regions whose Container Engine endpoint a
// credential that names no endpoints may be sent to.
var Regions = []string{
	"af-johannesburg-1", "ap-chuncheon-1", "ap-hyderabad-1", "ap-melbourne-1", "ap-mumbai-1", "ap-osaka-1",
	"ap-seoul-1", "ap-singapore-1", "ap-sydney-1", "ap-tokyo-1", "ca-montreal-1", "ca-toronto-1",
	"eu-amsterdam-1", "eu-frankfurt-1", "eu-madrid-1", "eu-marseille-1", "eu-milan-1", "eu-paris-1",
	"eu-stockholm-1", "eu-zurich-1", "il-jerusalem-1", "me-abudhabi-1", "me-dubai-1", "me-jeddah-1",
	"mx-monterrey-1", "mx-queretaro-1", "sa-bogota-1", "sa-santiago-1", "sa-saopaulo-1", "sa-valparaiso-1",
	"sa-vinhedo-1", "uk-cardiff-1", "uk-london-1", "us-ashburn-1", "us-chicago-1", "us-phoenix-1", "us-sanjose-1",
}

// PublicEndpoints are the regional Container Engine endpoints of Regions,
// and their Compute (iaas) endpoints, whose ListShapes gives the figures
// and availability domains of the shapes node pools may use
// (ClusterFacts).
func (Profile) PublicEndpoints() []string {
	out := make([]string, 0, 2*len(Regions))
	for _, r := range Regions {
		out = append(out, PublicEndpoint(r), ComputeEndpoint(r))
	}
	return out
}

// ComputeEndpoint is a region's Compute (iaas) endpoint, as the SDK's
// core.ComputeClient resolves it.
func ComputeEndpoint(region string) string {
	return "https://iaas." + region + ".oraclecloud.com"
}

// PublicEndpoint is a region's Container Engine endpoint, as the SDK
// resolves it.
func PublicEndpoint(region string) string {
	return "https://containerengine." + region + ".oraclecloud.com"
}

// Scope is the cluster's compartment: what OCI credentials are scoped to.
func (Profile) Scope(s *kpool.ClusterSpec) (field, id, word string) {
	const f = "spec.platform.oci.compartmentId"
	if o := s.Platform.OCI; o != nil {
		return f, o.CompartmentID, "compartment"
	}
	return f, "", "compartment"
}
