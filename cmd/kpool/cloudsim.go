package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// cloudsimFlags are kpool cloudsim's flags.
type cloudsimFlags struct {
	listen, providers, caFile string
	kubeconfigDir             string
	latency                   time.Duration
	rateLimit                 float64
	burst                     int
	faultRate                 float64
	seed                      int64
}

func (f *cloudsimFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "address of the first emulator; the others listen on the next ports (port 0: free ports)")
	fs.StringVar(&f.providers, "providers", strings.Join(clouds.Names(), ","), "comma-separated emulators to run")
	fs.StringVar(&f.caFile, "ca-file", "", "write the emulators' CA certificate (PEM) here")
	fs.StringVar(&f.kubeconfigDir, "kubeconfig-dir", "", "write each emulated cluster's kubeconfig here as kubeconfig-<cluster>.yaml (default: the --ca-file's folder)")
	fs.DurationVar(&f.latency, "latency", 0, "hold every answer this long")
	fs.Float64Var(&f.rateLimit, "rate-limit", 0, "requests per second each emulator allows, beyond which it answers 429 with Retry-After (0: no limit)")
	fs.IntVar(&f.burst, "burst", 0, "requests the rate limit allows at once (0: the rate, at least 1)")
	fs.Float64Var(&f.faultRate, "fault-rate", 0, "fraction (0..1) of requests that fail: 500, 503, a dropped connection, or an accepted operation that ends Failed")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the faults and ids, for a run that repeats")
}

// options are the emulators' engine options: the wall-clock defaults and
// the bad day the flags ask for.
func (f *cloudsimFlags) options() (sim.Options, error) {
	switch {
	case f.latency < 0:
		return sim.Options{}, fmt.Errorf("--latency %s: give a duration of 0 or more", f.latency)
	case f.rateLimit < 0 || math.IsNaN(f.rateLimit) || math.IsInf(f.rateLimit, 0):
		return sim.Options{}, fmt.Errorf("--rate-limit %g: give requests per second, 0 or more", f.rateLimit)
	case f.burst < 0:
		return sim.Options{}, fmt.Errorf("--burst %d: give a count of 0 or more", f.burst)
	case f.burst > 0 && f.rateLimit == 0:
		return sim.Options{}, errors.New("--burst is the rate limit's burst: give --rate-limit too")
	case !(f.faultRate >= 0 && f.faultRate <= 1):
		return sim.Options{}, fmt.Errorf("--fault-rate %g: give a fraction from 0 to 1", f.faultRate)
	}
	o := cloudsim.Defaults()
	o.Latency, o.RateLimit, o.Burst, o.FaultRate, o.Seed = f.latency, f.rateLimit, f.burst, f.faultRate, f.seed
	return o, nil
}

// newCloudsim runs kpool's cloud emulators standalone, on loopback.
func newCloudsim() *cobra.Command {
	var f cloudsimFlags
	cmd := &cobra.Command{
		Use:   "cloudsim",
		Short: "Run kpool's cloud emulators (AKS, EKS, GKE, OKE, Civo) on loopback over TLS",
		Long: `cloudsim serves emulators of the providers' node-pool APIs, speaking their wire
protocols, so that kpool's drivers can be run and tested without a cloud account.
It prints the endpoint to put in a cluster's spec.endpoint, and writes the TLS
certificate authority that clients must trust to --ca-file. Each emulated cluster
serves a Kubernetes API: its kubeconfig goes to kubeconfig-<cluster>.yaml beside the
CA file (or in --kubeconfig-dir), for kubectl --kubeconfig.

--latency, --rate-limit (with --burst) and --fault-rate rehearse a bad day:
slow answers, 429s with Retry-After, and 500s, 503s, dropped connections and
operations that end Failed (the same ones each run for a --seed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options()
			if err != nil {
				return err
			}
			cfg := cloudsim.Config{Emulators: clouds.Emulators(), Names: splitList(f.providers), Listen: f.listen, Options: o,
				KubeconfigDir: f.kubeconfigDir}
			return cloudsim.Run(cmd.Context(), cfg, f.caFile, cmd.OutOrStdout())
		},
	}
	f.register(cmd.Flags())
	cmd.AddCommand(newCloudsimCapacity())
	return cmd
}
