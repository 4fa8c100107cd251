package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/provider/k3s"
	"github.com/kpool/kpool/service"
)

// devUser owns the demo clusters kpool dev registers.
const devUser = "dev@kpool.example"

func newDev() *cobra.Command {
	var f serveFlags
	var user string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run kpool with its cloud emulators: the no-setup way to see it work",
		Long: `dev runs the API, the controllers, an SQLite database and kpool's cloud
emulators on loopback, registers one demo cluster per emulated provider pointing at
its emulator, and prints where to look. It takes the flags of kpool serve. The
emulators keep nothing between runs; the controllers recreate the pools kpool knows.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.reconcile = true
			f.logOut = cmd.ErrOrStderr()
			return dev(cmd.Context(), &f, user, cloudsim.Defaults(), cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	setDefault(cmd.Flags(), "database", "sqlite:"+filepath.Join(dataDir(), "kpool", "dev.db"))
	// On loopback the guide's walkthrough (curl with X-User-Email, KPOOL_USER)
	// keeps working; dev's own token works as well.
	setDefault(cmd.Flags(), "auth", auth.AuthHeader)
	setDefault(cmd.Flags(), "resync-fast", "2s")
	cmd.Flags().StringVar(&user, "user", devUser, "the user who owns the demo clusters")
	_ = cmd.Flags().MarkHidden("reconcile")
	return cmd
}

// dev runs kpool with its emulators, whose engines have emuOptions (tests
// give them a clock they drive).
func dev(ctx context.Context, f *serveFlags, user string, emuOptions sim.Options, out io.Writer) error {
	owner, err := kpool.ParseEmail(user)
	if err != nil {
		return fmt.Errorf("--user: %w", err)
	}
	if err := checkExposure(f); err != nil {
		return err
	}
	emu, err := startEmulators(f, emuOptions)
	if err != nil {
		return err
	}
	defer emu.Close()
	// Users may point clusters at the emulators (allowed endpoints), where
	// the emulators' identities go; clusters elsewhere get only what
	// --credentials names, never a cloud SDK's default chain.
	f.extraEndpoints = append(f.extraEndpoints, emu.URLs()...)
	f.emulators = emu.Identities()
	c, err := f.cloud()
	if err != nil {
		return err
	}
	rt, err := devTransport(emu)
	if err != nil {
		return err
	}
	p, err := start(ctx, f, clouds.Registry(provider.DriverOptions{Credentials: c.creds, Transport: rt}))
	if err != nil {
		return err
	}
	// Beside the emulators' clusters, a k3s one: a platform without node
	// pools, where every pool operation is a clean NOT_IMPLEMENTED.
	demos := append(slices.Clone(emu.Clusters), k3s.Demo())
	ids, err := registerDemos(ctx, p.svc, owner, demos)
	if err != nil {
		p.close()
		return err
	}
	token, err := devToken(ctx, p.store, owner)
	if err != nil {
		p.close()
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		p.close()
		return err
	}
	url := p.scheme() + "://" + ln.Addr().String()
	fmt.Fprintf(out, "kpool dev: API %s (database %s), emulators %s\n", url, redact(f.database), strings.Join(emu.URLs(), ", "))
	fmt.Fprintf(out, "  dashboard: %s/ (sign in with the token below)\n  metrics:  %s/metrics\n  API doc:  %s/api/v1/openapi.json\n\nDemo clusters, owned by %s:\n", url, url, url, owner)
	for _, d := range demos {
		how := "emulated"
		if !profiles.Profile(d.Spec.Platform.Type).Capabilities().NodePools {
			how = "no node pools: a pool there is 501 NOT_IMPLEMENTED"
		}
		fmt.Fprintf(out, "  %-10s %s  (%s, %s)\n", d.Name, ids[d.Name], d.Spec.Platform.Type, how)
	}
	describeDevKubeconfigs(out, emu)
	describeTry(out, emu, owner, url, token)
	a := api.NewServer(p.svc, p.access, p.log).Limit(api.NewLimiter(f.rate, f.burst)).EmulatedKubeconfigs(emulatedKubeconfigs(emu, ids))
	return p.run(ctx, ln, p.handler(a))
}

// describeTry prints the commands to try: the owner's token and a pool on
// each emulated cluster.
func describeTry(out io.Writer, emu *cloudsim.Running, owner, url, token string) {
	if len(emu.Clusters) == 0 {
		return
	}
	fmt.Fprintf(out, "\nTry it (the token is %s's, made for this run):\n  export KPOOL_SERVER=%s KPOOL_TOKEN=%s\n", owner, url, token)
	for _, d := range emu.Clusters {
		pt := d.Spec.Platform.Type
		caps := profiles.Profile(pt).Capabilities()
		zones := " --zones 1"
		if caps.Zones == provider.ZonesNone {
			zones = "" // a provider without zones
		}
		cli := profiles.Profile(pt).CLI()
		if cli.ExampleFlags != "" {
			zones += " " + cli.ExampleFlags
		}
		fmt.Fprintf(out, "  # a pool on %s (%s):\n  go run ./cmd/kpool nodepool create web --cluster %s --machine-type %s --count 3%s --wait\n",
			d.Name, caps.Name, d.Name, cli.MachineExample, zones) // a cluster is named by its name
	}
	fmt.Fprintf(out, "  go run ./cmd/kpool nodepool list\n  go run ./cmd/kpool events\n")
}

// emulatedKubeconfigs are the demo clusters' own kubeconfigs, by the id
// each was registered with.
func emulatedKubeconfigs(emu *cloudsim.Running, ids map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for name, kc := range emu.Kubeconfigs() {
		if id, ok := ids[name]; ok {
			out[id] = []byte(kc)
		}
	}
	return out
}

// startEmulators serves kpool dev's emulators on loopback, and hands them
// to the tests' hook (serveFlags.emulated) when there is one.
func startEmulators(f *serveFlags, o sim.Options) (*cloudsim.Running, error) {
	emu, err := cloudsim.Start(cloudsim.Config{Emulators: clouds.Emulators(), Listen: "127.0.0.1:0", Options: o})
	if err == nil {
		if err = writeDevKubeconfigs(emu, f.database); err != nil {
			_ = emu.Close()
			return nil, err
		}
	}
	if err == nil && f.emulated != nil {
		f.emulated(emu)
	}
	return emu, err
}

// devNoCredential is why a cluster in kpool dev that is on no emulator and
// names no credential has none.
const devNoCredential = "no credential: kpool dev does not use cloud credentials unless --credentials names them"

// devTransport sends the drivers' requests in kpool dev: to the emulators,
// trusting their certificate authority, and, for clusters that
// --credentials gives a credential, to the real clouds, trusting the
// system's.
func devTransport(emu *cloudsim.Running) (*http.Transport, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(emu.CA.PEM) {
		return nil, fmt.Errorf("kpool dev: the emulators' certificate authority does not parse")
	}
	return sim.Transport(roots), nil
}

// devCreatedBy marks the tokens kpool dev makes.
const devCreatedBy = "kpool dev"

// devToken makes a user token for owner, the one printed for this run, and
// revokes the ones earlier runs made, so that they do not pile up.
func devToken(ctx context.Context, st kpool.Store, owner string) (string, error) {
	ts, ok := st.(kpool.TokenStore)
	if !ok {
		return "", fmt.Errorf("the dev store keeps no tokens")
	}
	old, err := ts.Tokens(ctx)
	if err != nil {
		return "", err
	}
	now := time.Now()
	for _, t := range old {
		if t.CreatedBy == devCreatedBy && t.RevokedAt == nil {
			if err := ts.RevokeToken(ctx, t.ID, now); err != nil {
				return "", err
			}
		}
	}
	secret, _, err := createToken(ctx, ts, auth.TokenRequest{User: owner, Role: kpool.RoleUser, CreatedBy: devCreatedBy,
		Expires: kpool.RoleUser.DefaultLifetime()}, now)
	return secret, err
}

// registerDemos registers (or points at this run's emulators) the demo
// clusters, and returns their ids by name.
func registerDemos(ctx context.Context, svc *service.Service, owner string, demos []kpool.Cluster) (map[string]string, error) {
	uctx := kpool.WithIdentity(ctx, &kpool.Identity{Email: owner})
	existing, err := svc.Clusters(uctx, service.ListOptions{Limit: kpool.MaxLimit})
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, d := range demos {
		spec, err := json.Marshal(d.Spec)
		if err != nil {
			return nil, err
		}
		var found *kpool.Cluster
		for _, c := range existing.Items {
			if c.Name == d.Name {
				found = c
			}
		}
		if found != nil {
			// The emulators listen on a new port each run.
			patch, _ := json.Marshal(map[string]string{"endpoint": d.Spec.Endpoint})
			if _, err := svc.UpdateCluster(uctx, found.ID, service.Update{Patch: true, Spec: patch}); err != nil {
				return nil, fmt.Errorf("demo cluster %s: %w", d.Name, err)
			}
			ids[d.Name] = found.ID
			continue
		}
		c, err := svc.CreateCluster(uctx, service.ClusterCreate{Name: d.Name, Spec: spec})
		if err != nil {
			return nil, fmt.Errorf("demo cluster %s: %w", d.Name, err)
		}
		ids[d.Name] = c.ID
	}
	return ids, nil
}
