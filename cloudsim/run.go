package cloudsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
)

// Emulator is one cloud's emulator as the runner serves it: a handler
// built on the engine, holding demo data.
type Emulator interface {
	http.Handler
	// Clusters returns the emulator's clusters as kpool registers them
	// when the emulator is served at endpoint (only Name and Spec set).
	Clusters(endpoint string) []kpool.Cluster
	// Describe writes, for people, how to reach the emulator's clusters
	// at endpoint, one fact a line, indented by two spaces.
	Describe(w io.Writer, endpoint string)
	// Identity returns the platform the emulator stands for and the
	// identity a driver of that platform reaches its demo data with (the
	// emulator Demo makes), of the type the driver takes for a credential
	// of kind emulator (kpool dev).
	Identity() (kpool.PlatformType, any)
}

// Maker builds an emulator, its demo data included, on an engine with
// options o.
type Maker func(o sim.Options) (Emulator, error)

// Defaults are the engine options of emulators that people watch on the
// wall clock (`kpool cloudsim`, `kpool dev`): an operation takes 5 s plus
// 2 s per node, and the call log keeps the last 100,000 calls or fewer.
func Defaults() sim.Options {
	return sim.Options{OperationTime: 5 * time.Second, NodeTime: 2 * time.Second, MaxCalls: 100000}
}

// Config says what Start serves.
type Config struct {
	// Emulators are the emulators there are, by the name --providers
	// gives them.
	Emulators map[string]Maker
	// Names are the emulators to serve, in order; empty serves them all.
	Names []string
	// Listen is the first emulator's address (empty: 127.0.0.1:0). Each
	// next one listens on the next port, or on a free one for port 0.
	Listen string
	// Options are every emulator's engine options.
	Options sim.Options
	// KubeconfigDir is where Run writes the emulated clusters'
	// kubeconfigs; "" is the CA file's folder.
	KubeconfigDir string
}

// Served is one emulator being served.
type Served struct {
	Name     string
	Emulator Emulator
	*sim.TLSEndpoint
}

// Running are emulators being served and what kpool needs to use them.
type Running struct {
	// Emulators are in the order they were named.
	Emulators []Served
	// CA signed every emulator's certificate; clients must trust it.
	CA *sim.CA
	// Clusters are every emulator's demo clusters, their endpoint the
	// emulator's URL.
	Clusters []kpool.Cluster
	// KubeconfigFiles are the kubeconfig files WriteKubeconfigs wrote, by
	// cluster name.
	KubeconfigFiles map[string]string
}

// Start serves the named emulators, each over TLS on its own listener,
// until Close or Shutdown.
func Start(cfg Config) (*Running, error) {
	known := slices.Sorted(maps.Keys(cfg.Emulators))
	var names []string
	for _, n := range cfg.Names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		names = known
	}
	if len(names) == 0 {
		return nil, errors.New("cloudsim: no emulators to serve")
	}
	for _, n := range names {
		if cfg.Emulators[n] == nil {
			return nil, fmt.Errorf("cloudsim: unknown provider %q; known: %s", n, strings.Join(known, ", "))
		}
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ca, err := sim.NewCA()
	if err != nil {
		return nil, err
	}
	r := &Running{CA: ca}
	for i, n := range names {
		emu, err := cfg.Emulators[n](cfg.Options)
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("cloudsim: %s: %w", n, err)
		}
		addr, err := nthAddr(listen, i)
		if err != nil {
			_ = r.Close()
			return nil, err
		}
		ep, err := ca.Serve(emu, addr)
		if err != nil {
			_ = r.Close()
			return nil, err
		}
		r.Emulators = append(r.Emulators, Served{Name: n, Emulator: emu, TLSEndpoint: ep})
		r.Clusters = append(r.Clusters, emu.Clusters(ep.URL)...)
	}
	return r, nil
}

// nthAddr is the address of the i-th emulator (from 0) when the first
// listens on listen: the same host, the port i further on (0 stays 0).
func nthAddr(listen string, i int) (string, error) {
	if i == 0 {
		return listen, nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("cloudsim: listen address %q: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("cloudsim: listen address %q: the port must be a number to serve several emulators", listen)
	}
	if p == 0 {
		return listen, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

// Client returns a new HTTP client that trusts every emulator's
// certificate, with sim.Transport's timeouts (an emulator that stops
// answering fails requests rather than hanging them). It satisfies
// azcore's policy.Transporter.
func (r *Running) Client() *http.Client {
	return &http.Client{Transport: sim.Transport(r.CA.Pool)}
}

// Identities returns each emulator's identity, by platform.
func (r *Running) Identities() map[kpool.PlatformType]any {
	out := map[kpool.PlatformType]any{}
	for _, s := range r.Emulators {
		t, id := s.Emulator.Identity()
		out[t] = id
	}
	return out
}

// URLs returns the emulators' URLs, in order.
func (r *Running) URLs() []string {
	var out []string
	for _, s := range r.Emulators {
		out = append(out, s.URL)
	}
	return out
}

// Close stops every emulator at once.
func (r *Running) Close() error {
	var errs []error
	for _, s := range r.Emulators {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// Shutdown stops every emulator gracefully, waiting for requests in
// flight until ctx ends.
func (r *Running) Shutdown(ctx context.Context) error {
	var errs []error
	for _, s := range r.Emulators {
		errs = append(errs, s.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Run serves the emulators cfg names until ctx ends (see Start). It
// writes the certificate authority's PEM to caFile when one is given, and
// prints to out how to reach each emulator and its demo clusters; it
// writes the emulated clusters' kubeconfigs to cfg.KubeconfigDir (or the
// CA file's folder) and prints their kubectl lines.
func Run(ctx context.Context, cfg Config, caFile string, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	r, err := Start(cfg)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Shutdown(sctx)
	}()
	caNote := caFile
	if caFile != "" {
		if err := os.WriteFile(caFile, r.CA.PEM, 0o644); err != nil {
			return fmt.Errorf("cloudsim: writing the CA certificate: %w", err)
		}
	} else {
		caNote = "(not written: pass --ca-file to get the PEM clients must trust)"
	}
	kubeNote := ""
	if dir := kubeconfigDir(cfg.KubeconfigDir, caFile); dir != "" {
		if _, err := r.WriteKubeconfigs(dir); err != nil {
			return err
		}
	} else if len(r.Kubeconfigs()) > 0 {
		kubeNote = "kubeconfigs not written: pass --ca-file or --kubeconfig-dir"
	}
	var banner bytes.Buffer // one write, so that a reader never sees half of it
	r.describe(&banner, cfg.Options, caNote)
	DescribeKubeconfigs(&banner, r.KubeconfigFiles, kubeNote)
	_, _ = out.Write(banner.Bytes())

	stopped := make(chan error, len(r.Emulators))
	for _, s := range r.Emulators {
		go func() {
			<-s.Done()
			stopped <- s.Err()
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-stopped:
		if err != nil {
			return fmt.Errorf("cloudsim: %w", err)
		}
		return nil
	}
}

// describe prints the banner of Run.
func (r *Running) describe(out io.Writer, o sim.Options, caNote string) {
	var names []string
	for _, s := range r.Emulators {
		names = append(names, s.Name)
	}
	fmt.Fprintf(out, "kpool cloudsim: serving %s\n", strings.Join(names, ", "))
	fmt.Fprintf(out, "  CA file:   %s\n", caNote)
	fmt.Fprintf(out, "  timing:    an operation takes %s plus %s per node added or removed\n", o.OperationTime, o.NodeTime)
	if bad := badDay(o); bad != "" {
		fmt.Fprintf(out, "  bad day:   %s\n", bad)
	}
	for _, s := range r.Emulators {
		fmt.Fprintf(out, "%s:\n  endpoint:  %s\n", s.Name, s.URL)
		s.Emulator.Describe(out, s.URL)
	}
	if len(r.Clusters) > 0 {
		fmt.Fprintf(out, "Register the demo clusters with kpool (POST /api/v1/clusters):\n")
		for _, c := range r.Clusters {
			b, _ := json.MarshalIndent(map[string]any{"name": c.Name, "spec": c.Spec}, "  ", "  ")
			fmt.Fprintf(out, "  %s\n", b)
		}
	}
}

// badDay says what latency, rate limit and faults o injects; "" for none.
func badDay(o sim.Options) string {
	var parts []string
	if o.Latency > 0 {
		parts = append(parts, fmt.Sprintf("latency %s", o.Latency))
	}
	if o.RateLimit > 0 {
		limit := fmt.Sprintf("rate limit %g requests/s", o.RateLimit)
		if o.Burst > 0 {
			limit += fmt.Sprintf(", burst %d", o.Burst)
		}
		parts = append(parts, limit+" (then 429 with Retry-After)")
	}
	if o.FaultRate > 0 {
		parts = append(parts, fmt.Sprintf("fault rate %g, seed %d (500, 503, dropped connections, failed operations)", o.FaultRate, o.Seed))
	}
	return strings.Join(parts, "; ")
}
