package driver_test

import (
	"net/http"
	"testing"

	"github.com/kpool/kpool/provider/providertest"
)

// TestWire: an allowed endpoint that redirects gets its API key sent
// nowhere else, and one that echoes the API key leaves none of it in
// the scrubbed error (providertest.RunWire).
func TestWire(t *testing.T) {
	providertest.RunWire(t, func(t *testing.T, endpoint string, client *http.Client) *providertest.Harness {
		h := newEmulated(t).harness(t)
		h.Driver = setup.Driver(t, client.Transport, providertest.FastRetry(), endpoint)
		h.Cluster = clusterAt(endpoint)
		return h
	})
}
