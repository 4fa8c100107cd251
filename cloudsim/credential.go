package cloudsim

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Credential is the Azure credential for the emulators: a fixed bearer
// token they accept. It never leaves loopback and grants nothing elsewhere.
type Credential struct{}

// GetToken returns the emulators' token.
func (Credential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "kpool-cloudsim", ExpiresOn: time.Now().Add(time.Hour)}, nil
}
