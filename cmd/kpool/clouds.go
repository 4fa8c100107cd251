package main

// What the operator allows of cloud endpoints and credentials, and the
// drivers that use them.

import (
	"fmt"
	"net/http"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// cloudAccess is what the operator allows users of cloud endpoints and
// credentials.
type cloudAccess struct {
	endpoints kpool.Origins
	creds     *provider.CredentialSet
}

// cloud reads --allowed-endpoints and --credentials, once: the service and
// the drivers share what it returns. Without a credentials file, each
// cloud's SDK default chain is the default credential, for everyone, and is
// sent only to the cloud's public endpoint and the allowed endpoints; in
// kpool dev (emulators set) there is no default chain: the emulators'
// identities for the clusters on them, and only the file's for the others.
func (f *serveFlags) cloud() (*cloudAccess, error) {
	if f.clouds != nil {
		return f.clouds, nil
	}
	allowed := append(splitList(f.allowedEndpoints), f.extraEndpoints...)
	eps, err := kpool.ParseOrigins(allowed)
	if err != nil {
		return nil, fmt.Errorf("--allowed-endpoints: %w", err)
	}
	var creds *provider.CredentialSet
	switch {
	case f.credentials != "":
		creds, err = provider.LoadCredentials(f.credentials, catalog.Profiles())
		if err != nil {
			return nil, fmt.Errorf("--credentials: %w", err)
		}
	case f.emulators == nil:
		if creds, err = provider.DefaultCredentials(catalog.Profiles(), allowed); err != nil {
			return nil, err
		}
	}
	if f.emulators != nil {
		creds, err = provider.WithEmulators(creds, catalog.Profiles(), f.emulators, f.extraEndpoints, devNoCredential)
		if err != nil {
			return nil, fmt.Errorf("--credentials: %w", err)
		}
	}
	f.clouds = &cloudAccess{endpoints: eps, creds: creds}
	return f.clouds, nil
}

// drivers are the provider drivers of a real deployment, each with the
// operator's credentials (or its cloud SDK's default chain, or with
// --emulators the emulators' identities), each sent only where the
// operator allows.
func drivers(f *serveFlags) (*provider.Registry, error) {
	transport, err := f.emu.use(f)
	if err != nil {
		return nil, err
	}
	c, err := f.cloud()
	if err != nil {
		return nil, err
	}
	return clouds.Registry(provider.DriverOptions{Credentials: c.creds, Transport: transport}), nil
}

// cloudTransport sends the drivers' requests (tokens from the identity
// provider, then the cloud's API); nil is the cloud SDK's default. Tests set
// it to reach the emulators and record what is sent.
var cloudTransport http.RoundTripper
