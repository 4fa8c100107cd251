package driver

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/kpool/kpool/provider"
)

// serviceAccount returns the token source of a service-account
// credential. Its key's token endpoint (token_uri; Google's when the key
// names none) is its authority: the assertion the key signs goes there,
// through the driver's transport, and nowhere else (provider.TokenClient),
// neither to the GKE API nor where the endpoint redirects.
func (d *Driver) serviceAccount(cr *provider.Credential) (oauth2.TokenSource, error) {
	key, err := cr.Secret()
	if err != nil {
		return nil, err
	}
	var f struct {
		TokenURI string `json:"token_uri"`
	}
	if json.Unmarshal([]byte(key), &f) != nil {
		return nil, fmt.Errorf("credential %s: not a service account key file", cr.Name)
	}
	if f.TokenURI == "" {
		f.TokenURI = google.JWTTokenURL
	}
	refusals := &provider.Refusals{}
	// The token source outlives this call: not its context.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, provider.TokenClient(cr, f.TokenURI, d.opts.Transport, refusals))
	creds, err := google.CredentialsFromJSONWithType(ctx, []byte(key), google.ServiceAccount, scopes...)
	if err != nil {
		// The parser's message may quote the key: say only what failed.
		return nil, fmt.Errorf("credential %s: not a service account key file", cr.Name)
	}
	return refusedSource{creds.TokenSource, refusals}, nil
}

// refusedSource answers a token the wire refused to fetch with that
// refusal: oauth2's JWT flow keeps only the text of its transport's
// errors.
type refusedSource struct {
	ts       oauth2.TokenSource
	refusals *provider.Refusals
}

func (s refusedSource) Token() (*oauth2.Token, error) {
	tk, err := s.ts.Token()
	if err != nil {
		if rh := s.refusals.Take(); rh != nil {
			return nil, rh
		}
	}
	return tk, err
}
