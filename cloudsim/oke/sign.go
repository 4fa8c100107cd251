package oke

import (
	"bytes"
	"crypto"
	"crypto/md5"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// OCI's HTTP signature (draft-cavage-http-signatures, version 1) as the
// SDKs send it:
//
//	Signature version="1",headers="date (request-target) host",keyId="<tenancy>/<user>/<fingerprint>",algorithm="rsa-sha256",signature="<base64>"
//
// The parameters may come in any order.
var sigParam = regexp.MustCompile(`([a-zA-Z]+)="([^"]*)"`)

// keyIDRE is an API key's keyId: tenancy OCID, user OCID, fingerprint.
var keyIDRE = regexp.MustCompile(`^ocid1\.tenancy\.[^/\s]+/ocid1\.user\.[^/\s]+/[0-9a-f]{2}(:[0-9a-f]{2}){15}$`)

// authenticate checks the request's signature as OCI's front door does:
// one missing, malformed, not covering the headers OCI requires, with an
// unknown key or not verifying is 401 NotAuthenticated. With no keys
// configured, any well-formed signature is accepted. The date is not
// checked against the clock: the emulator's clock is simulated.
func (s *Server) authenticate(req *sim.Request) *sim.Reply {
	if why := s.verify(req.HTTP, req.Body); why != "" {
		return failf(http.StatusUnauthorized, errNotAuthenticated, "The required information to complete authentication was not provided or was incorrect (%s).", why)
	}
	return nil
}

// verify checks a request's OCI signature (authenticate's rules) and
// says why it fails ("" when it holds); body is the request's body.
func (s *Server) verify(r *http.Request, body []byte) string {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "no Authorization header"
	}
	rest, ok := strings.CutPrefix(h, "Signature ")
	if !ok {
		return "the Authorization header is not an OCI signature"
	}
	params := map[string]string{}
	for _, m := range sigParam.FindAllStringSubmatch(rest, -1) {
		params[m[1]] = m[2]
	}
	if params["version"] != "1" || params["algorithm"] != "rsa-sha256" || params["keyId"] == "" || params["signature"] == "" || params["headers"] == "" {
		return "the signature needs version=\"1\", algorithm=\"rsa-sha256\", keyId, headers and signature"
	}
	if !keyIDRE.MatchString(params["keyId"]) {
		return "keyId is not <tenancy OCID>/<user OCID>/<fingerprint>"
	}
	headers := strings.Fields(strings.ToLower(params["headers"]))
	if why := uncovered(r, headers); why != "" {
		return why
	}
	if slices.Contains(headers, "x-content-sha256") {
		sum := sha256.Sum256(body)
		if r.Header.Get("X-Content-Sha256") != base64.StdEncoding.EncodeToString(sum[:]) {
			return "x-content-sha256 is not the body's hash"
		}
	}
	if slices.Contains(headers, "content-length") && r.Header.Get("Content-Length") != strconv.Itoa(len(body)) && !(r.Header.Get("Content-Length") == "" && len(body) == 0) {
		return "content-length is not the body's length"
	}
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil || len(sig) == 0 {
		return "the signature is not base64"
	}
	if len(s.keys) == 0 {
		return ""
	}
	key, ok := s.keys[params["keyId"]]
	if !ok {
		return "unknown key"
	}
	digest := sha256.Sum256(signingString(r, body, headers))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig) != nil {
		return "the signature does not verify"
	}
	return ""
}

// uncovered says which header OCI requires that a signature's header list
// leaves out ("" when none): (request-target), host and the date, as
// "date" or "x-date" (the OCI signature spec takes either; Oracle's
// JavaScript SDK signs x-date, the Go SDK date); for PUT and POST (and
// PATCH, which the SDKs treat alike) also x-content-sha256, content-type
// and content-length.
func uncovered(r *http.Request, headers []string) string {
	if !slices.Contains(headers, "date") && !slices.Contains(headers, "x-date") {
		return "the signature covers neither date nor x-date"
	}
	if slices.Contains(headers, "x-date") && r.Header.Get("X-Date") == "" || slices.Contains(headers, "date") && r.Header.Get("Date") == "" {
		return "a signed date header is missing"
	}
	need := []string{"(request-target)", "host"}
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		need = append(need, "content-length", "content-type", "x-content-sha256")
	}
	for _, n := range need {
		if !slices.Contains(headers, n) {
			return "the signature does not cover " + n
		}
	}
	return ""
}

// signingString is what a client signs: each header its signature
// covers, in its order, as "name: value" lines.
func signingString(r *http.Request, body []byte, headers []string) []byte {
	var b bytes.Buffer
	for i, n := range headers {
		if i > 0 {
			b.WriteByte('\n')
		}
		var v string
		switch n {
		case "(request-target)":
			v = strings.ToLower(r.Method) + " " + r.URL.RequestURI()
		case "host":
			v = r.Host
		case "content-length":
			v = r.Header.Get("Content-Length")
			if v == "" {
				v = strconv.Itoa(len(body))
			}
		default:
			v = r.Header.Get(n)
		}
		b.WriteString(n + ": " + v)
	}
	return b.Bytes()
}

// Fingerprint is an API signing key's fingerprint as OCI shows it: the MD5
// of its DER public key, in colon-separated hex pairs.
func Fingerprint(k *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	sum := md5.Sum(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

// KeyID is the keyId of an API key: tenancy/user/fingerprint.
func KeyID(tenancy, user string, k *rsa.PublicKey) string {
	return tenancy + "/" + user + "/" + Fingerprint(k)
}

// PEM encodes a private key as the PEM an OCI config file's key_file holds.
func PEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}
