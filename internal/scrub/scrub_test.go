package scrub_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/internal/scrub"
)

func TestString(t *testing.T) {
	token, _ := auth.NewTokenSecret()
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJlbWFpbCI6ImFsaWNlQGV4YW1wbGUuY29tIn0.c2lnbmF0dXJlLW9mLXRoZS1pc3N1ZXI"
	for _, tc := range []struct{ name, in, want string }{
		{"API token in a query", "GET /api/v1/clusters?token=" + token, "GET /api/v1/clusters?token=xxxxx"},
		{"API token in a path", "/api/v1/clusters/" + token + "/nodepools", "/api/v1/clusters/kpool_xxxxx/nodepools"},
		{"a long piece of a token", "got kpool_dLCf2_TNeixBY_OEuzB69J6jN…", "got kpool_xxxxx…"},
		{"metric names stay", "kpool_queue_depth and kpool_controller_tracked_pools_total", "kpool_queue_depth and kpool_controller_tracked_pools_total"},
		{"schema names stay", "search_path=kpool_test_3f9a1c2b7d4e0011aabb", "search_path=kpool_test_3f9a1c2b7d4e0011aabb"},
		{"JWT", "id token " + jwt + " refused", "id token xxxxx refused"},
		{"bearer header", "Authorization: Bearer abcdefgh.ijklmnop", "Authorization: Bearer xxxxx"},
		{"basic header", "authorization: basic dXNlcjpwYXNzd29yZA==", "authorization: basic xxxxx"},
		{"the word bearer", "send Authorization: Bearer <API token>", "send Authorization: Bearer <API token>"},
		{"URL password", "dial postgres://kpool:s3cret@db:5432/kpool failed", "dial postgres://kpool:xxxxx@db:5432/kpool failed"},
		{"URL without password", "https://user@example.com/x", "https://user@example.com/x"},
		{"form body", "grant_type=client_credentials&client_id=abc&client_secret=s3cret&scope=x", "grant_type=client_credentials&client_id=abc&client_secret=xxxxx&scope=x"},
		{"DSN", "host=db password='s3 cret' dbname=k", "host=db password=xxxxx dbname=k"},
		{"JSON", `{"access_token":"s3cret","expires_in":3599}`, `{"access_token":"xxxxx","expires_in":3599}`},
		{"plain words stay", "credentials.team.secretEnv: not an environment variable name", "credentials.team.secretEnv: not an environment variable name"},
		{"counts stay", "tokens=3 max_token_age=5", "tokens=3 max_token_age=5"},
		{"SigV4", "header was AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261126/us-west-2/eks/aws4_request, SignedHeaders=host;x-amz-date, Signature=3f9a1c2b7d4e",
			"header was AWS4-HMAC-SHA256 Credential=xxxxx, SignedHeaders=host;x-amz-date, Signature=xxxxx"},
		{"OCI signature", `Signature version="1",keyId="ocid1.tenancy.oc1..aaaa/ocid1.user.oc1..bbbb/12:34",algorithm="rsa-sha256",signature="c2lnbmF0dXJl"`,
			`Signature version="1",keyId="ocid1.tenancy.oc1..aaaa/ocid1.user.oc1..bbbb/12:34",algorithm="rsa-sha256",signature=xxxxx`},
		{"OCI signature cut short", `keyId="ocid1.tenancy.oc1..aaaa/12:34",algorithm="rsa-sha256",signature="c2lnbmF0dXJlLW9mLXRoZS…`,
			`keyId="ocid1.tenancy.oc1..aaaa/12:34",algorithm="rsa-sha256",signature=xxxxx`},
		{"OCI signature quoted again", `got "Signature version=\"1\",signature=\"c2lnbmF0dXJl\"" back`, `got "Signature version=\"1\",signature=xxxxx" back`},
		{"a credential's name stays", `spec.credential: credential "team-a" may not be sent to https://arm.example`, `spec.credential: credential "team-a" may not be sent to https://arm.example`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scrub.String(tc.in); got != tc.want {
				t.Fatalf("String(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestTokenPrefix: the package's copy of the prefix is kpool's.
func TestTokenPrefix(t *testing.T) {
	token, _ := auth.NewTokenSecret()
	if scrub.String(token) != kpool.TokenPrefix+scrub.Hidden {
		t.Fatalf("a token is not recognised: %s", scrub.String(token))
	}
}

// TestAttr: a logger with Attr writes no secret, whether in the message,
// a string, an error, a group or an attribute named for a secret.
func TestAttr(t *testing.T) {
	token, _ := auth.NewTokenSecret()
	for _, json := range []bool{false, true} {
		var buf bytes.Buffer
		opts := &slog.HandlerOptions{ReplaceAttr: scrub.Attr}
		var h slog.Handler = slog.NewTextHandler(&buf, opts)
		if json {
			h = slog.NewJSONHandler(&buf, opts)
		}
		log := slog.New(h).With("pre", "Bearer "+token[6:])
		log.Info("request with "+token, "path", "/x?token="+token, "err", errors.New("calling https://u:"+token[6:]+"@h/"),
			slog.Group("g", "password", "hunter2-hunter2"), "client_secret", "hunter3-hunter3", "status", 401)
		out := buf.String()
		for _, s := range []string{token[6:18], "hunter2", "hunter3"} {
			if strings.Contains(out, s) {
				t.Fatalf("json=%v: the log shows %q:\n%s", json, s, out)
			}
		}
		if !strings.Contains(out, "401") || !strings.Contains(out, "request with kpool_xxxxx") {
			t.Fatalf("json=%v: the log lost what is not secret:\n%s", json, out)
		}
	}
}
