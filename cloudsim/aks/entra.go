package aks

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kpool/kpool/cloudsim/sim"
)

// App is an Entra ID application (a service principal) the emulator's
// token endpoint knows: a client-secret credential of TenantID, ClientID
// and Secret gets access tokens for ARM from it.
type App struct {
	TenantID, ClientID, Secret string
}

// tokenLifetime is how long an access token the emulator issues is
// accepted, on the engine's clock.
const tokenLifetime = time.Hour

// AddApp registers an application with the emulator's Entra ID token
// endpoint, https://host/<tenant>/oauth2/v2.0/token (its authority is the
// emulator's URL). From then on ARM accepts only the access tokens that
// endpoint issued (and Options.Token), as real ARM accepts only Entra ID's.
func (s *Server) AddApp(a App) {
	s.Do(func(time.Time) {
		s.apps[strings.ToLower(a.TenantID)+"/"+strings.ToLower(a.ClientID)] = a.Secret
	})
}

// IssuedTokens returns every access token the token endpoint issued, for
// tests that check where they went (never to a log).
func (s *Server) IssuedTokens() []string {
	var out []string
	s.Do(func(time.Time) {
		out = append(out, s.issuedOrder...)
	})
	return out
}

// entraPath reports whether the request is for the token endpoint or the
// tenant's OpenID configuration, and returns the tenant and what is asked.
func entraPath(r *http.Request) (tenant, what string, ok bool) {
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(seg) == 4 && seg[1] == "v2.0" && seg[2] == ".well-known" && seg[3] == "openid-configuration":
		return seg[0], "config", true
	case len(seg) == 4 && seg[1] == "oauth2" && seg[2] == "v2.0" && seg[3] == "token":
		return seg[0], "token", true
	}
	return "", "", false
}

// entra answers Entra ID's discovery document and client-credentials
// grants: a known application with its secret gets a new random access
// token; any other answer is Entra ID's error. It answers nil to a request
// that is not Entra ID's.
func (s *Server) entra(req *sim.Request) *sim.Reply {
	tenant, what, ok := entraPath(req.HTTP)
	if !ok {
		return nil
	}
	base := req.BaseURL() + "/" + tenant
	if what == "config" {
		if req.HTTP.Method != http.MethodGet {
			return methodNotAllowed(req.HTTP.Method)
		}
		return jsonReply(http.StatusOK, map[string]any{
			"token_endpoint":         base + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize",
			"issuer":                 base + "/v2.0",
		})
	}
	if req.HTTP.Method != http.MethodPost {
		return methodNotAllowed(req.HTTP.Method)
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil || form.Get("grant_type") != "client_credentials" {
		return entraError(http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
	}
	known := false
	for k := range s.apps {
		known = known || strings.HasPrefix(k, strings.ToLower(tenant)+"/")
	}
	if !known {
		return entraError(http.StatusBadRequest, "invalid_request", "AADSTS90002: Tenant '"+tenant+"' not found.")
	}
	secret, ok := s.apps[strings.ToLower(tenant)+"/"+strings.ToLower(form.Get("client_id"))]
	if !ok {
		return entraError(http.StatusBadRequest, "unauthorized_client", "AADSTS700016: Application with identifier was not found in the directory.")
	}
	if subtle.ConstantTimeCompare([]byte(form.Get("client_secret")), []byte(secret)) != 1 || secret == "" {
		return entraError(http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := "cloudsim." + base64.RawURLEncoding.EncodeToString(b[:])
	s.issued[tok] = req.Now.Add(tokenLifetime)
	s.scopes[tok] = form.Get("scope")
	s.issuedOrder = append(s.issuedOrder, tok)
	return jsonReply(http.StatusOK, map[string]any{
		"token_type": "Bearer", "expires_in": int(tokenLifetime.Seconds()) - 1, "ext_expires_in": int(tokenLifetime.Seconds()) - 1,
		"access_token": tok,
	})
}

func entraError(status int, code, description string) *sim.Reply {
	return jsonReply(status, map[string]any{"error": code, "error_description": description, "error_codes": []int{}})
}
