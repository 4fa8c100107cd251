package driver

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// UseDefaultCredential makes tc the identity of credentials of kind
// default (DefaultAzureCredential, elsewhere) until the test ends.
func UseDefaultCredential(t testing.TB, tc azcore.TokenCredential) {
	old := defaultCredential
	defaultCredential = func() (azcore.TokenCredential, error) { return tc, nil }
	t.Cleanup(func() { defaultCredential = old })
}
