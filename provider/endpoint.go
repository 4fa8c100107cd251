package provider

import (
	"net/url"
	"strings"

	"github.com/kpool/kpool"
)

// Endpoint returns the endpoint a driver sends a cluster's calls to: its
// spec.endpoint without a trailing slash, or public when it names none
// ("" where the SDK finds the public one itself). An endpoint that is not
// an absolute https URL is a validation error on spec.endpoint, before
// any request: no driver sends a credential (a bearer token, an API key, a
// signed request) over plain http, so every call would fail and no retry
// could change that. api names the cloud's API in the message ("ARM").
func Endpoint(c *kpool.Cluster, public, api string) (string, error) {
	e := c.Spec.Endpoint
	if e == "" {
		return public, nil
	}
	t := c.Spec.Platform.Type
	u, err := url.Parse(e)
	switch {
	case err != nil || u.Host == "":
		return "", ValidationError(t, "spec.endpoint", "%q is not an absolute URL", e)
	case !strings.EqualFold(u.Scheme, "https"):
		return "", ValidationError(t, "spec.endpoint", "%q: %s must be reached over https: kpool sends no credential over %s", e, api, u.Scheme)
	}
	return strings.TrimSuffix(e, "/"), nil
}
