package oke

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUncovered holds the signed header list to OCI's signature spec
// (docs.oracle.com, Request Signatures): the date as date or x-date,
// (request-target) and host always; x-content-sha256, content-type and
// content-length for a body.
func TestUncovered(t *testing.T) {
	for _, tc := range []struct {
		method, headers, set, want string
	}{
		{"GET", "date (request-target) host", "Date", ""},
		{"GET", "x-date (request-target) host", "X-Date", ""}, // Oracle's JavaScript SDK
		{"GET", "(request-target) host", "Date", "neither date nor x-date"},
		{"GET", "x-date (request-target) host", "Date", "signed date header is missing"},
		{"GET", "date host", "Date", "does not cover (request-target)"},
		{"POST", "x-date (request-target) host content-type content-length x-content-sha256", "X-Date", ""},
		{"PUT", "date (request-target) host content-type content-length", "Date", "does not cover x-content-sha256"},
		{"POST", "date (request-target) host", "Date", "does not cover content-length"},
		{"DELETE", "date (request-target) host", "Date", ""},
	} {
		r := httptest.NewRequest(tc.method, "https://oke.test/20180222/nodePools", nil)
		r.Header.Set(tc.set, "Thu, 26 Nov 2026 05:00:00 GMT")
		got := uncovered(r, strings.Fields(tc.headers))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s signed %q: %q, want %q", tc.method, tc.headers, got, tc.want)
		}
	}
}
