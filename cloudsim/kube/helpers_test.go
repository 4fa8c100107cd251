package kube_test

import (
	"crypto/tls"
	"net/http"
)

// insecure is a client of the test's loopback server that skips its
// certificate check (the typed client's test checks it).
func insecure() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback test server
}
