package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/placement"
)

func newPlace() *cobra.Command {
	var (
		f                  clientFlags
		file, cluster, app string
		pool, zone         string
		pools, zones       []string
		defaultPool        string
		noTolerations      bool
	)
	cmd := &cobra.Command{
		Use:   "place -f FILE [--cluster ID] [--pool P | --pools P,Q] [--zone Z | --zones Y,Z]",
		Short: "Place an app's workloads on node pools and zones: print its manifests with their scheduling",
		Long: `place reads Kubernetes manifests and writes them to stdout with each workload
(Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod) placed on
the pools and zones it is meant for, so that it fits

  kpool place -f app.yaml --cluster CLUSTER_ID | kubectl apply -f -

Intent comes from the flags, then each workload's annotations kompox.dev/pool,
kompox.dev/pools, kompox.dev/zone and kompox.dev/zones (comma-separated; on the
workload, then on its pod template), then --app FILE (a Kompox app file's spec.deployment); pools and zones are weighed
apart. A workload that names no pool and selects none goes to --default-pool.
One pool or zone becomes a nodeSelector on kompox.dev/node-pool or
kompox.dev/node-zone, several one required node-affinity term with In; the
workload's own nodeSelector, affinity and tolerations are kept, and a
contradiction with them is an error.

With --cluster the intent is checked against the cluster's pools in kpool
(through the API, as --user): each pool must exist and not be being deleted,
each zone must be one the pool runs in, a zone on a pool in several zones is
expressed with topology.kubernetes.io/zone, and the pools' taints (with those
the provider adds, such as AKS spot pools') are tolerated unless
--no-tolerations. Warnings (a pool not Ready, more replicas than nodes) go to
stderr. Without --cluster nothing is checked and no server is needed.
Documents that are not workloads are written as they came.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("give the manifests with -f FILE (- reads stdin)")
			}
			manifests, err := readInput(cmd, file)
			if err != nil {
				return err
			}
			req := api.PlacementRequest{Manifests: string(manifests), Pool: pool, Pools: pools, Zone: zone, Zones: zones,
				DefaultPool: &defaultPool, NoTolerations: noTolerations}
			if app != "" {
				data, err := readInput(cmd, app)
				if err != nil {
					return err
				}
				intent, err := placement.ReadApp(app, data)
				if err != nil {
					return err
				}
				req.App = &intent
			}
			var res *placement.Result
			if cluster != "" {
				if err := f.fromContext(cmd); err != nil {
					return err
				}
				if err := f.check(); err != nil {
					return err
				}
				id, idErr := clusterID(cmd.Context(), f.client(), cluster)
				if idErr != nil {
					return idErr
				}
				res, err = f.client().Place(cmd.Context(), id, req)
			} else {
				o := req.Options(nil)
				o.AppName = app
				res, err = placement.Place(manifests, o)
			}
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", w)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), res.Manifests)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&file, "filename", "f", "", "Kubernetes manifests, YAML or JSON documents; - reads stdin")
	fs.StringVar(&cluster, "cluster", "", "check against this cluster's pools (name or ID), through the API")
	fs.StringVar(&pool, "pool", "", "the pool every workload goes to")
	fs.StringSliceVar(&pools, "pools", nil, "pools every workload may go to, comma-separated")
	fs.StringVar(&zone, "zone", "", "the zone: logical (1), <region>-1, or the provider's own (us-central1-a)")
	fs.StringSliceVar(&zones, "zones", nil, "zones, comma-separated")
	fs.StringVar(&app, "app", "", "a Kompox app file whose spec.deployment gives pool, zone, pools or zones")
	fs.StringVar(&defaultPool, "default-pool", placement.DefaultPool, `pool of workloads that name none and select none ("" for none)`)
	fs.BoolVar(&noTolerations, "no-tolerations", false, "do not add tolerations of the pools' taints")
	cmd.MarkFlagsMutuallyExclusive("pool", "pools")
	cmd.MarkFlagsMutuallyExclusive("zone", "zones")
	fs.StringVar(&f.server, "server", "http://127.0.0.1:8080", "URL of the kpool API server, for --cluster (KPOOL_SERVER)")
	fs.StringVar(&f.user, "user", "", "your e-mail address, for --cluster (KPOOL_USER)")
	fs.StringVar(&f.token, "token", "", "your API token, for --cluster (KPOOL_TOKEN)")
	fs.StringVar(&f.context, "context", "", "the config file's context, for --cluster (KPOOL_CONTEXT)")
	bindEnv(fs, map[string]string{"server": "KPOOL_SERVER", "token": "KPOOL_TOKEN", "user": "KPOOL_USER", "context": "KPOOL_CONTEXT"})
	f.output = outTable
	return cmd
}

// readInput reads a file, or stdin for "-".
func readInput(cmd *cobra.Command, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(cmd.InOrStdin(), placement.MaxManifestBytes+1))
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, fmt.Errorf("%s is empty", name)
	}
	return data, nil
}
