package provider

import "net/http"

// DriverOptions are what every driver is built with: the argument of the
// one constructor each provider/<cloud>/driver package has (New), which
// provider/catalog/clouds lists.
type DriverOptions struct {
	// Credentials say which of the operator's credentials each cluster
	// uses, for which subscriptions, accounts, projects or compartments,
	// and where each may be sent. Nil is the platform's default credential
	// alone: its SDK's default chain, any scope, its public endpoints only
	// (CredentialsOr).
	Credentials Credentials
	// Transport sends each HTTP request, to the cloud's API and for a
	// credential's tokens, once the wire's check passed it (Wire); nil is
	// http.DefaultTransport. Set it to trust the certificate of an
	// endpoint the system does not. It sends the one request it is given:
	// an *http.Client's Transport, never the client, whose redirects the
	// wire could not see.
	Transport http.RoundTripper
	// Retry is how each call is timed out and retried; nil is
	// DefaultRetry().
	Retry *Retry
}

// For returns o as a driver of profile p keeps it: Credentials p's
// default credential when nil (CredentialsOr), Retry DefaultRetry when nil.
func (o DriverOptions) For(p Profile) DriverOptions {
	o.Credentials = CredentialsOr(o.Credentials, p)
	r := RetryOr(o.Retry)
	o.Retry = &r
	return o
}

// NewDriver builds a platform's driver with the options every driver
// takes.
type NewDriver func(DriverOptions) Driver

// Constructor is a driver package's New as a NewDriver.
func Constructor[D Driver](newDriver func(DriverOptions) D) NewDriver {
	return func(o DriverOptions) Driver { return newDriver(o) }
}
