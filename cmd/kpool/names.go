package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// Names wherever an id is taken: a cluster or a pool may be named by its
// id or by its name, found with the API's ?name= filter. A name that more
// than one object has (a pool name in several clusters, a cluster name of
// several owners, as an admin sees them) is an error listing them.

// clusterID resolves a cluster reference to its id. A reference may carry
// the kind -o name prints (cluster/ID).
func clusterID(ctx context.Context, c *api.Client, ref string) (string, error) {
	ref = strings.TrimPrefix(ref, "cluster/")
	if kpool.IsUUID(strings.ToLower(ref)) {
		return strings.ToLower(ref), nil
	}
	list, err := c.Clusters(ctx, kpool.ListOptions{Name: ref, Limit: kpool.MaxLimit})
	if err != nil {
		return "", err
	}
	switch len(list.Clusters) {
	case 0:
		return "", kpool.Errorf(kpool.CodeNotFound, "No cluster named %q: kpool cluster list shows the clusters you can see", ref)
	case 1:
		return list.Clusters[0].ID, nil
	}
	var cands []string
	for _, cl := range list.Clusters {
		cands = append(cands, fmt.Sprintf("%s (registered by %s)", cl.ID, cl.CreatedBy))
	}
	return "", kpool.Invalid("cluster", "%d clusters are named %q: give one's ID: %s", len(cands), ref, strings.Join(cands, ", "))
}

// poolID resolves a pool reference to its id; cluster (a name or an id, or
// "") narrows a name to one cluster.
func poolID(ctx context.Context, c *api.Client, ref, cluster string) (string, error) {
	ref = strings.TrimPrefix(ref, "nodepool/")
	if kpool.IsUUID(strings.ToLower(ref)) {
		return strings.ToLower(ref), nil
	}
	o := kpool.ListOptions{Name: ref, Limit: kpool.MaxLimit}
	if cluster != "" {
		id, err := clusterID(ctx, c, cluster)
		if err != nil {
			return "", err
		}
		o.ClusterID = id
	}
	list, err := c.NodePools(ctx, o)
	if err != nil {
		return "", err
	}
	switch len(list.NodePools) {
	case 0:
		in := ""
		if cluster != "" {
			in = " in cluster " + cluster
		}
		return "", kpool.Errorf(kpool.CodeNotFound, "No node pool named %q%s: kpool nodepool list shows the pools you can see", ref, in)
	case 1:
		return list.NodePools[0].ID, nil
	}
	var cands []string
	for _, p := range list.NodePools {
		cands = append(cands, fmt.Sprintf("%s in cluster %s", p.ID, p.ClusterID))
	}
	return "", kpool.Invalid("name", "%d node pools are named %q: give --cluster, or one's ID: %s", len(cands), ref, strings.Join(cands, ", "))
}

// byName lets cmd's ID argument be a name: a pool's (kind "node pool",
// narrowed by a --cluster flag it adds) or a cluster's. The argument is
// replaced by the id before cmd runs.
func byName(f *clientFlags, cmd *cobra.Command, kind string) *cobra.Command {
	var cluster string
	if kind == "node pool" {
		cmd.Flags().StringVar(&cluster, "cluster", "", "the pool's cluster (name or ID), to find a pool by its name")
	}
	cmd.Use = strings.Replace(cmd.Use, " ID", " NAME|ID", 1)
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(c, args); err != nil {
				return err
			}
		}
		var id string
		var err error
		if kind == "node pool" {
			in := cluster
			if in == "" {
				in = f.defaultCluster // the context's
			}
			id, err = poolID(c.Context(), f.client(), args[0], in)
		} else {
			id, err = clusterID(c.Context(), f.client(), args[0])
		}
		if err != nil {
			return err
		}
		args[0] = id
		return nil
	}
	return cmd
}

// clusterFlagByName lets cmd's --cluster flag name a cluster: it is
// replaced by the cluster's id before cmd runs. client is how cmd reaches
// the server (nil: the flag is used as it is, as by an offline command).
func clusterFlagByName(cmd *cobra.Command, client func() *api.Client) *cobra.Command {
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(c, args); err != nil {
				return err
			}
		}
		fl := c.Flags().Lookup("cluster")
		if fl == nil || !fl.Changed || fl.Value.String() == "" || kpool.IsUUID(strings.ToLower(fl.Value.String())) {
			return nil
		}
		id, err := clusterID(c.Context(), client(), fl.Value.String())
		if err != nil {
			return err
		}
		return fl.Value.Set(id)
	}
	return cmd
}

// defaultClusterFlag gives cmd's --cluster the context's cluster when the
// command line names none.
func defaultClusterFlag(f *clientFlags, cmd *cobra.Command) *cobra.Command {
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(c, args); err != nil {
				return err
			}
		}
		if fl := c.Flags().Lookup("cluster"); fl != nil && !fl.Changed && f.defaultCluster != "" {
			return c.Flags().Set("cluster", f.defaultCluster)
		}
		return nil
	}
	return cmd
}

// createPerZone creates a zonal logical pool: one member per zone, in one
// request; with --wait, it waits for each.
func (f *clientFlags) createPerZone(cmd *cobra.Command, c *api.Client, wf waitFlags, body api.NodePoolBody) error {
	list, err := f.writer(cmd).CreateZonalNodePools(cmd.Context(), body)
	if err != nil {
		return err
	}
	if wf.wait {
		for i, p := range list.NodePools {
			final, err := newWaiter(cmd, c, f.clock.Tick, p, false).run(cmd.Context(), wf.timeout)
			if err != nil {
				return err
			}
			list.NodePools[i] = final
		}
	}
	return f.print(cmd, list, func(w io.Writer) { poolTable(w, list.NodePools, f.wide(), f.clock.Now()) })
}
