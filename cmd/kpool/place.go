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

const placeLong = `place reads Kubernetes manifests and writes them to stdout with each workload
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
Documents that are not workloads are written as they came.`

// place is kpool place: its flags, and what it does with them.
type place struct {
	f                  clientFlags // the server, for --cluster
	file, cluster, app string
	pool, zone         string
	pools, zones       []string
	defaultPool        string
	noTolerations      bool
}

func newPlace() *cobra.Command {
	o := &place{}
	cmd := &cobra.Command{
		Use:   "place -f FILE [--cluster ID] [--pool P | --pools P,Q] [--zone Z | --zones Y,Z]",
		Short: "Place an app's workloads on node pools and zones: print its manifests with their scheduling",
		Long:  placeLong,
		Args:  cobra.NoArgs,
		RunE:  o.run,
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.file, "filename", "f", "", "Kubernetes manifests, YAML or JSON documents; - reads stdin")
	fs.StringVar(&o.cluster, "cluster", "", "check against this cluster's pools (name or ID), through the API")
	fs.StringVar(&o.pool, "pool", "", "the pool every workload goes to")
	fs.StringSliceVar(&o.pools, "pools", nil, "pools every workload may go to, comma-separated")
	fs.StringVar(&o.zone, "zone", "", "the zone: logical (1), <region>-1, or the provider's own (us-central1-a)")
	fs.StringSliceVar(&o.zones, "zones", nil, "zones, comma-separated")
	fs.StringVar(&o.app, "app", "", "a Kompox app file whose spec.deployment gives pool, zone, pools or zones")
	fs.StringVar(&o.defaultPool, "default-pool", placement.DefaultPool, `pool of workloads that name none and select none ("" for none)`)
	fs.BoolVar(&o.noTolerations, "no-tolerations", false, "do not add tolerations of the pools' taints")
	cmd.MarkFlagsMutuallyExclusive("pool", "pools")
	cmd.MarkFlagsMutuallyExclusive("zone", "zones")
	fs.StringVar(&o.f.server, "server", "http://127.0.0.1:8080", "URL of the kpool API server, for --cluster (KPOOL_SERVER)")
	fs.StringVar(&o.f.user, "user", "", "your e-mail address, for --cluster (KPOOL_USER)")
	fs.StringVar(&o.f.token, "token", "", "your API token, for --cluster (KPOOL_TOKEN)")
	fs.StringVar(&o.f.context, "context", "", "the config file's context, for --cluster (KPOOL_CONTEXT)")
	bindEnv(fs, map[string]string{"server": "KPOOL_SERVER", "token": "KPOOL_TOKEN", "user": "KPOOL_USER", "context": "KPOOL_CONTEXT"})
	o.f.output = outTable
	return cmd
}

func (o *place) run(cmd *cobra.Command, _ []string) error {
	if o.file == "" {
		return errors.New("give the manifests with -f FILE (- reads stdin)")
	}
	manifests, err := readInput(cmd, o.file)
	if err != nil {
		return err
	}
	req, err := o.request(cmd, manifests)
	if err != nil {
		return err
	}
	res, err := o.place(cmd, manifests, req)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", w)
	}
	_, err = io.WriteString(cmd.OutOrStdout(), res.Manifests)
	return err
}

// request is the placement the flags ask for, with --app FILE's intent.
func (o *place) request(cmd *cobra.Command, manifests []byte) (api.PlacementRequest, error) {
	req := api.PlacementRequest{Manifests: string(manifests), Pool: o.pool, Pools: o.pools, Zone: o.zone, Zones: o.zones,
		DefaultPool: &o.defaultPool, NoTolerations: o.noTolerations}
	if o.app == "" {
		return req, nil
	}
	data, err := readInput(cmd, o.app)
	if err != nil {
		return req, err
	}
	intent, err := placement.ReadApp(o.app, data)
	if err != nil {
		return req, err
	}
	req.App = &intent
	return req, nil
}

// place places the manifests: through the API, checked against the pools
// of --cluster, or without it here, checked against nothing.
func (o *place) place(cmd *cobra.Command, manifests []byte, req api.PlacementRequest) (*placement.Result, error) {
	if o.cluster == "" {
		opts := req.Options(nil)
		opts.AppName = o.app
		return placement.Place(manifests, opts)
	}
	if err := o.f.fromContext(cmd); err != nil {
		return nil, err
	}
	if err := o.f.check(); err != nil {
		return nil, err
	}
	c := o.f.client()
	id, err := c.ClusterID(cmd.Context(), o.cluster)
	if err != nil {
		return nil, err
	}
	return c.Place(cmd.Context(), id, req)
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
