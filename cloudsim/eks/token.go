package eks

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The form of an EKS token, as aws-iam-authenticator's pkg/token/token.go
// makes and verifies it (and `aws eks get-token`, which makes the same).
const (
	tokenPrefix   = "k8s-aws-v1."
	maxTokenBytes = 4096
	clusterHeader = "x-k8s-aws-id"
	// tokenLifetime: "presigned STS urls are valid for 15 minutes after
	// timestamp in x-amz-date", whatever X-Amz-Expires says.
	tokenLifetime = 15 * time.Minute
)

// tokenParams are the query parameters a token's URL may carry
// (aws-iam-authenticator's parameterWhitelist), lower-cased.
var tokenParams = map[string]bool{"action": true, "version": true, "x-amz-algorithm": true, "x-amz-credential": true,
	"x-amz-date": true, "x-amz-expires": true, "x-amz-security-token": true, "x-amz-signature": true, "x-amz-signedheaders": true}

// checkToken verifies an EKS token for cluster name as the cluster's
// authenticator does: k8s-aws-v1. and the base64url (no padding) of an
// https URL of the STS endpoint the emulator plays (its own origin, at
// which it was reached), path /, only the allowed parameters once each,
// Action=GetCallerIdentity, Version=2011-06-15, x-k8s-aws-id among the
// signed headers, X-Amz-Expires 0-900, X-Amz-Date less than 15 minutes
// ago on the wall clock (STS's own: clients sign with theirs, while the
// emulator's clock may run fast for its operations; SetTokenClock sets
// another); then STS's part: the SigV4 presigned
// signature (service sts) made again with the x-k8s-aws-id header set to
// this cluster's name, so a token for another cluster is refused. With no
// keys configured the signature is not checked.
// SetTokenClock sets the clock tokens' ages are read on (nil: the wall
// clock), for tests that move time.
func (s *Server) SetTokenClock(now func() time.Time) {
	s.Do(func(time.Time) { s.tokenNow = now })
}

func (s *Server) checkToken(name, token string) bool {
	q, u, ok := tokenURL(token, s.reachedAt)
	if !ok {
		return false
	}
	date, err := time.Parse("20060102T150405Z", q.Get("x-amz-date"))
	if err != nil {
		return false
	}
	now := time.Now()
	s.Do(func(time.Time) {
		if s.tokenNow != nil {
			now = s.tokenNow()
		}
	})
	if now.After(date.Add(tokenLifetime)) {
		return false
	}
	return s.presignedBy(u, name, date)
}

// tokenURL decodes a token's presigned URL and checks its form; q holds
// its parameters with lower-cased names.
func tokenURL(token string, ours func(host string) bool) (q url.Values, u *url.URL, ok bool) {
	rest, found := strings.CutPrefix(token, tokenPrefix)
	if !found || len(token) > maxTokenBytes {
		return nil, nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, nil, false
	}
	u, err = url.Parse(string(raw))
	if err != nil || u.Scheme != "https" || !ours(u.Host) || u.Path != "/" {
		return nil, nil, false
	}
	all, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, false
	}
	q = url.Values{}
	for k, vs := range all {
		if !tokenParams[strings.ToLower(k)] || len(vs) != 1 {
			return nil, nil, false
		}
		q.Set(strings.ToLower(k), vs[0])
	}
	expires, err := strconv.Atoi(q.Get("x-amz-expires"))
	signed := strings.Split(strings.ToLower(q.Get("x-amz-signedheaders")), ";")
	ok = q.Get("action") == "GetCallerIdentity" && q.Get("version") == "2011-06-15" && err == nil && expires >= 0 && expires <= 900 &&
		len(signed) == 2 && signed[0] == "host" && signed[1] == clusterHeader
	return q, u, ok
}

// presignedBy reports whether u carries the signature STS would compute
// for it with the x-k8s-aws-id header set to cluster, signed at date by
// one of the emulator's keys (service sts, the credential's region).
func (s *Server) presignedBy(u *url.URL, cluster string, date time.Time) bool {
	q := u.Query()
	cred := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(cred) != 5 || cred[1] != date.Format("20060102") || cred[3] != "sts" || cred[4] != "aws4_request" {
		return false
	}
	if len(s.keys) == 0 {
		return true
	}
	secret, known := s.keys[cred[0]]
	if !known {
		return false
	}
	got := q.Get("X-Amz-Signature")
	for _, k := range []string{"X-Amz-Signature", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders"} {
		q.Del(k)
	}
	again := *u
	again.RawQuery = q.Encode()
	r, err := http.NewRequestWithContext(context.Background(), http.MethodGet, again.String(), nil)
	if err != nil {
		return false
	}
	r.Header.Set(clusterHeader, cluster)
	empty := sha256.Sum256(nil)
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: cred[0], SecretAccessKey: secret},
		r, hex.EncodeToString(empty[:]), "sts", cred[2], date)
	if err != nil {
		return false
	}
	su, err := url.Parse(signed)
	if err != nil {
		return false
	}
	want := su.Query().Get("X-Amz-Signature")
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}
