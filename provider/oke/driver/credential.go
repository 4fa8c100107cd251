package driver

import (
	"fmt"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/oke"
)

// defaultConfig is the identity of credentials of kind default: the OCI
// config file and environment (tests replace it).
var defaultConfig = common.DefaultConfigProvider

// identity returns the signing identity of a credential, in region.
func (d *Driver) identity(cr *provider.Credential, region string) (common.ConfigurationProvider, error) {
	switch cr.Kind {
	case provider.CredentialDefault:
		return regional{defaultConfig(), region}, nil
	case provider.CredentialEmulator:
		cp, err := provider.IdentityOf[common.ConfigurationProvider](cr)
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: err.Error(), Err: err}
		}
		return regional{cp, region}, nil
	case oke.CredentialAPIKey:
		key, err := cr.Secret()
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: "no OCI API key: " + err.Error(), Err: err}
		}
		return common.NewRawConfigurationProvider(cr.Settings["tenantId"], cr.Settings["clientId"], region, cr.Settings["fingerprint"], key, nil), nil
	}
	return nil, &provider.Error{Kind: provider.KindPermissionDenied, Provider: platform, Reason: fmt.Sprintf("credential %s: kind %q is not an OCI credential kind", cr.Name, cr.Kind)}
}

// regional is a configuration provider in the cluster's region.
type regional struct {
	common.ConfigurationProvider
	region string
}

func (r regional) Region() (string, error) { return r.region, nil }
