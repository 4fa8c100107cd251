package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// Names wherever an ID is taken: a cluster or a pool may be named by its
// ID or by its name (api.Client's ClusterID and NodePoolID resolve them).
// The hooks below replace a command's name argument, or its --cluster, by
// the ID before the command runs.

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
			id, err = f.client().NodePoolID(c.Context(), args[0], in)
		} else {
			id, err = f.client().ClusterID(c.Context(), args[0])
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
		id, err := client().ClusterID(c.Context(), fl.Value.String())
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

// shown names clusters and pools where a person reads them (tables, the
// get and status views): one list of the clusters per command, and pools
// looked up once each (or listed once, for events). An ID that is not
// visible, or that a lookup fails on, is shown as it is. A nil *shown
// shows every ID as it is.
type shown struct {
	ctx         context.Context
	client      *api.Client
	clusters    map[string]string // nil until first asked
	pools       map[string]string
	poolsListed bool
}

// names is a name cache for cmd's run.
func (f *clientFlags) names(cmd *cobra.Command) *shown {
	return &shown{ctx: cmd.Context(), client: f.client(), pools: map[string]string{}}
}

// cluster is the name of the cluster id, or id.
func (s *shown) cluster(id string) string {
	if s == nil || id == "" {
		return id
	}
	if s.clusters == nil && s.client != nil {
		s.clusters = map[string]string{}
		_ = pages(true, service.ListOptions{Limit: kpool.MaxLimit}, func(o service.ListOptions) (string, error) {
			page, err := s.client.Clusters(s.ctx, o)
			if err != nil {
				return "", err
			}
			for _, c := range page.Clusters {
				s.clusters[c.ID] = c.Name
			}
			return page.Next, nil
		})
	}
	n, ok := s.clusters[id]
	if !ok && s.client != nil {
		// One made since the list (a watch runs long), asked once.
		if c, err := s.client.Cluster(s.ctx, id); err == nil {
			n = c.Name
		}
		s.clusters[id] = n
	}
	return nameOr(n, id)
}

// pool is the name of the pool id, or id: from the pools listed or seen,
// else asked of the server once.
func (s *shown) pool(id string) string {
	if s == nil || id == "" {
		return id
	}
	n, ok := s.pools[id]
	if !ok && !s.poolsListed && s.client != nil {
		if p, err := s.client.NodePool(s.ctx, id); err == nil {
			n = p.Name
		}
		s.pools[id] = n
	}
	return nameOr(n, id)
}

// listPools learns the names of every pool the caller sees, in one list:
// for a table that names many (events).
func (s *shown) listPools() {
	if s == nil || s.poolsListed {
		return
	}
	s.poolsListed = true
	_ = pages(true, service.ListOptions{Limit: kpool.MaxLimit}, func(o service.ListOptions) (string, error) {
		page, err := s.client.NodePools(s.ctx, o)
		if err != nil {
			return "", err
		}
		for _, p := range page.NodePools {
			s.pools[p.ID] = p.Name
		}
		return page.Next, nil
	})
}

func nameOr(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
