package eks

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/kpool/kpool/cloudsim/sim"
)

// sigV4 is the form of an Authorization header of AWS Signature Version 4.
var sigV4 = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([A-Z0-9]{16,128})/(\d{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$`)

// authenticate checks the request's SigV4 signature as AWS's front door
// does: a missing header is MissingAuthenticationTokenException, a
// malformed one IncompleteSignatureException, an unknown key
// UnrecognizedClientException and a wrong signature
// InvalidSignatureException, all 403. With no keys configured, any
// well-formed header is accepted.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	rep := s.checkSignature(req)
	if rep != nil && isEC2(req.HTTP) {
		return ec2Refusal(rep)
	}
	return rep
}

// checkSignature is authenticate's check, answered in EKS's shapes.
func (s *Server) checkSignature(req *sim.Request) *sim.Reply {
	r := req.HTTP
	h := r.Header.Get("Authorization")
	if h == "" {
		return failf(errMissingToken, "Missing Authentication Token")
	}
	m := sigV4.FindStringSubmatch(h)
	if m == nil {
		return failf(errIncompleteSig, "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters in the AWS4-HMAC-SHA256 format.")
	}
	key, date, region, service, signed, sig := m[1], m[2], m[3], m[4], m[5], m[6]
	if want := serviceOf(r); service != want {
		return failf(errInvalidSignature, "Credential should be scoped to correct service: '%s'.", want)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || amzDate[:8] != date {
		return failf(errIncompleteSig, "Date must be in ISO-8601 'basic format' in X-Amz-Date and agree with the credential scope.")
	}
	if len(s.keys) == 0 {
		return nil
	}
	secret, ok := s.keys[key]
	if !ok {
		return failf(errUnrecognizedClient, "The security token included in the request is invalid.")
	}
	want, err := signature(r, req.Body, signed, key, secret, service, region, at)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return failf(errInvalidSignature, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return nil
}

// serviceOf is the service a request must be signed for: ec2 for EC2's
// Query API, eks for the rest.
func serviceOf(r *http.Request) string {
	if isEC2(r) {
		return "ec2"
	}
	return "eks"
}

// signedRegion is the region of the credential scope of a request that
// authenticate accepted: the region EKS serves it in.
func signedRegion(r *http.Request) string {
	if m := sigV4.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[3]
	}
	return ""
}

// signature signs again, with secret, the request as its client saw it
// (its method, URL, body and the headers it says it signed) and returns
// the signature.
func signature(r *http.Request, body []byte, signed, key, secret, service, region string, at time.Time) (string, error) {
	u := *r.URL
	u.Scheme, u.Host = "https", r.Host
	c, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), nil)
	if err != nil {
		return "", err
	}
	c.URL.Path, c.URL.RawPath = r.URL.Path, r.URL.RawPath
	c.Host = r.Host
	for _, name := range strings.Split(signed, ";") {
		switch name {
		case "host":
		case "content-length":
			c.ContentLength = r.ContentLength
			c.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		default:
			c.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" {
		hash = h
	}
	err = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}, c, hash, service, region, at)
	if err != nil {
		return "", err
	}
	m := sigV4.FindStringSubmatch(c.Header.Get("Authorization"))
	if m == nil {
		return "", nil
	}
	return m[6], nil
}
