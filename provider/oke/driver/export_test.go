package driver

import (
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
)

// UseDefaultConfig makes cp the identity of credentials of kind default
// (the OCI config file's, elsewhere) until the test ends.
func UseDefaultConfig(t testing.TB, cp common.ConfigurationProvider) {
	old := defaultConfig
	defaultConfig = func() common.ConfigurationProvider { return cp }
	t.Cleanup(func() { defaultConfig = old })
}
