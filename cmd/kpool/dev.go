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

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
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
emulators keep nothing between runs; the controllers recreate the pools kpool knows.

A restart keeps your shell working. The demo user's token is kept beside the
database (dev.token beside dev.db, readable by you only; the database holds only its
hash) and used again while it works; "kpool token list --database sqlite:PATH/dev.db"
shows it and "kpool token revoke ID --database sqlite:PATH/dev.db" retires it, and the
next run makes a new one. Every cluster on the last run's emulators, the demo ones and
those registered with --endpoint, is pointed at this run's (dev-emulators.json
records where they listened).`,
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
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		p.close()
		return err
	}
	b, err := setUpDev(ctx, p, f, emu, owner)
	if err != nil {
		ln.Close()
		p.close()
		return err
	}
	b.url = p.scheme() + "://" + ln.Addr().String()
	b.print(out)
	a := api.NewServer(p.svc, p.access, p.log).Limit(api.NewLimiter(f.rate, f.burst)).EmulatedKubeconfigs(emulatedKubeconfigs(emu, b.ids))
	return p.run(ctx, ln, p.handler(a))
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

// registerDemos registers (or points at this run's emulators) the demo
// clusters, and returns their ids by name, and why those it left out
// were: their cloud cluster is registered already (a user registered the
// emulator's cluster under another name).
func registerDemos(ctx context.Context, svc *service.Service, owner string, demos []kpool.Cluster) (ids, left map[string]string, err error) {
	uctx := kpool.WithIdentity(ctx, &kpool.Identity{Email: owner})
	existing, err := svc.Clusters(uctx, service.ListOptions{Limit: kpool.MaxLimit})
	if err != nil {
		return nil, nil, err
	}
	ids, left = map[string]string{}, map[string]string{}
	for _, d := range demos {
		id, err := registerDemo(uctx, svc, existing.Items, d)
		switch {
		case kpool.ErrorCode(err) == kpool.CodeConflict:
			left[d.Name] = err.Error()
		case err != nil:
			return nil, nil, fmt.Errorf("demo cluster %s: %w", d.Name, err)
		default:
			ids[d.Name] = id
		}
	}
	return ids, left, nil
}

// registerDemo registers demo d, or points the owner's cluster of its name
// at d's endpoint (the emulators listen on a new port each run).
func registerDemo(uctx context.Context, svc *service.Service, existing []*kpool.Cluster, d kpool.Cluster) (string, error) {
	for _, c := range existing {
		if c.Name == d.Name {
			patch, _ := json.Marshal(map[string]string{"endpoint": d.Spec.Endpoint})
			_, err := svc.UpdateCluster(uctx, c.ID, service.Update{Patch: true, Spec: patch})
			return c.ID, err
		}
	}
	spec, err := json.Marshal(d.Spec)
	if err != nil {
		return "", err
	}
	c, err := svc.CreateCluster(uctx, service.ClusterCreate{Name: d.Name, Spec: spec})
	if err != nil {
		return "", err
	}
	return c.ID, nil
}
