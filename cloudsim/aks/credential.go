package aks

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Credential is the Azure credential for the emulator: a fixed bearer
// token it accepts. It never leaves loopback and grants nothing elsewhere.
type Credential struct{}

// GetToken returns the emulator's token.
func (Credential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "kpool-cloudsim", ExpiresOn: time.Now().Add(time.Hour)}, nil
}
