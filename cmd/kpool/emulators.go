package main

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// emulatorFlags point a kpool serve or controller at kpool's cloud
// emulators running in another process (kpool cloudsim, kpoolbench's
// fleet), as kpool dev points itself at its own: for benchmarks and demos
// of several processes on one database.
type emulatorFlags struct {
	urls string // comma-separated origins of the emulators
	ca   string // their CA certificate (PEM)
}

func (e *emulatorFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.urls, "emulators", "",
		"comma-separated https origins of kpool's cloud emulators (kpool cloudsim): clusters there are reached with the emulators' identities, as kpool dev reaches its own, and no cloud SDK's default chain is used; with --emulator-ca (KPOOL_EMULATORS)")
	fs.StringVar(&e.ca, "emulator-ca", "", "the emulators' CA certificate, PEM (kpool cloudsim --ca-file) (KPOOL_EMULATOR_CA)")
	bindEnv(fs, map[string]string{"emulators": "KPOOL_EMULATORS", "emulator-ca": "KPOOL_EMULATOR_CA"})
}

// use sets f up to reach the emulators, before f.cloud() first runs, and
// returns the drivers' transport: cloudTransport without --emulators, else
// one that trusts the system's roots and the emulators' CA.
func (e *emulatorFlags) use(f *serveFlags) (http.RoundTripper, error) {
	urls := splitList(e.urls)
	if len(urls) == 0 {
		if e.ca != "" {
			return nil, fmt.Errorf("--emulator-ca without --emulators")
		}
		return cloudTransport, nil
	}
	if e.ca == "" {
		return nil, fmt.Errorf("--emulators: give --emulator-ca too, the CA the emulators' certificates are signed by")
	}
	pem, err := os.ReadFile(e.ca)
	if err != nil {
		return nil, fmt.Errorf("--emulator-ca: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--emulator-ca %s: no PEM certificate in it", e.ca)
	}
	ids, err := emulatorIdentities()
	if err != nil {
		return nil, err
	}
	f.extraEndpoints = append(f.extraEndpoints, urls...)
	f.emulators = ids
	return sim.Transport(roots), nil
}

// emulatorIdentities are the identities every cloud's emulator takes, by
// platform: fixed demo identities, read from a throwaway emulator of each
// (building one starts nothing).
func emulatorIdentities() (map[kpool.PlatformType]any, error) {
	out := map[kpool.PlatformType]any{}
	for _, c := range clouds.All() {
		e, err := c.Emulator(cloudsim.Defaults())
		if err != nil {
			return nil, fmt.Errorf("--emulators: %s: %w", c.Name, err)
		}
		t, id := e.Identity()
		out[t] = id
	}
	return out, nil
}
