package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/poolspec"
	"github.com/kpool/kpool/service"
)

func newClusterCmd(clk clock) *cobra.Command {
	f := &clientFlags{clock: clk}
	cmd := &cobra.Command{
		Use:     "cluster",
		Aliases: []string{"clusters"},
		Short:   "Register, list, show and delete clusters",
		RunE:    groupRun,
	}
	f.register(cmd)
	cmd.AddCommand(newClusterCreate(f), newClusterList(f), byNames(f, newClusterGet(f), "cluster", nil), byName(f, newClusterUpdate(f), "cluster"), byNames(f, newClusterDelete(f), "cluster", askClusterDelete), byName(f, newClusterImport(f), "cluster"),
		byName(f, newClusterNodes(f), "cluster"), byName(f, newClusterKubeconfig(f), "cluster"))
	return cmd
}

type clusterCreateFlags struct {
	file, platform, endpoint, id string
	credential, team, kubeconfig string
	values                       map[string]*string
	maps                         map[string]*[]string // the repeatable KEY=VALUE flags
}

func (c *clusterCreateFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&c.file, "filename", "f", "", "YAML or JSON file of the cluster (the API's cluster body); - reads stdin")
	fs.StringVar(&c.platform, "platform", "", "platform type: "+platformNames())
	fs.StringVar(&c.endpoint, "endpoint", "", "provider API base URL (an emulator or sovereign cloud)")
	fs.StringVar(&c.id, "id", "", "cluster ID (a UUID) to use instead of a generated one")
	fs.StringVar(&c.credential, "credential", "", "the operator's named credential the drivers use for the cluster (default: the platform's default)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "the operator's named kubeconfig credential through which kpool reaches the cluster's Kubernetes API (default: the access its driver gets from the cloud)")
	fs.StringVar(&c.team, "team", "", "the team the cluster belongs to (an admin of the team may put it there; \"\" takes it out): its members see and change it as their role allows")
	c.values = map[string]*string{}
	c.maps = map[string]*[]string{}
	for _, p := range clusterPlatformFlags() {
		var names []string
		for _, t := range p.platforms {
			names = append(names, string(t))
		}
		usage := fmt.Sprintf("%s (%s)", p.usage, strings.Join(names, ", "))
		if p.isMap {
			c.maps[p.name] = new([]string)
			fs.StringArrayVar(c.maps[p.name], p.name, nil, usage)
			continue
		}
		c.values[p.name] = new(string)
		fs.StringVar(c.values[p.name], p.name, "", usage)
	}
}

// spec returns the spec object the flags make for platform type t.
func (c *clusterCreateFlags) spec(fs *pflag.FlagSet, t kpool.PlatformType) (map[string]any, error) {
	block := map[string]any{}
	for _, p := range clusterPlatformFlags() {
		if !fs.Changed(p.name) {
			continue
		}
		if t == "" {
			return nil, fmt.Errorf("--%s needs --platform (or a platform type in the file)", p.name)
		}
		if !p.allows(t) {
			var names []string
			for _, a := range p.platforms {
				names = append(names, string(a))
			}
			return nil, fmt.Errorf("--%s does not apply to platform %s (it is for %s)", p.name, t, strings.Join(names, ", "))
		}
		if p.isMap {
			m, err := poolspec.Pairs(p.name, *c.maps[p.name])
			if err != nil {
				return nil, err
			}
			block[p.field] = m
			continue
		}
		block[p.field] = *c.values[p.name]
	}
	platform := map[string]any{}
	if fs.Changed("platform") {
		platform["type"] = t
	}
	// Without a file, send the chosen platform's block even when empty so
	// that the server names each missing field.
	if len(block) > 0 || (c.file == "" && profiles.Profile(t).Capabilities().NodePools) {
		platform[string(t)] = block
	}
	spec := map[string]any{}
	if len(platform) > 0 {
		spec["platform"] = platform
	}
	if fs.Changed("endpoint") {
		spec["endpoint"] = c.endpoint
	}
	if fs.Changed("credential") {
		spec["credential"] = c.credential
	}
	if fs.Changed("kubeconfig") {
		spec["kubeconfig"] = c.kubeconfig
	}
	return spec, nil
}

func newClusterCreate(f *clientFlags) *cobra.Command {
	var c clusterCreateFlags
	cmd := &cobra.Command{
		Use:   "create NAME --platform TYPE [platform flags] | create [NAME] -f FILE",
		Short: "Register an existing Kubernetes cluster",
		Long: `Register an existing Kubernetes cluster with kpool.

Give its platform and the settings that locate it:
` + clusterFlagsHelp() + `

Or give -f FILE, a YAML or JSON cluster body ({name, spec: {platform: ...}}).
NAME and flags given with -f override the file.`,
		Args: nameArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			var body api.ClusterBody
			if c.file != "" {
				if err := decodeFile(cmd, c.file, &body); err != nil {
					return err
				}
			}
			if len(args) == 1 {
				body.Name = &args[0]
			}
			if body.Name == nil || *body.Name == "" {
				return errors.New("give the cluster's NAME (or a name in -f FILE)")
			}
			if fs.Changed("id") {
				body.ID = c.id
			}
			if fs.Changed("team") {
				body.Team = &c.team
			}
			t := kpool.PlatformType(c.platform)
			if !fs.Changed("platform") {
				var s struct {
					Platform struct {
						Type kpool.PlatformType `json:"type"`
					} `json:"platform"`
				}
				_ = json.Unmarshal(body.Spec, &s)
				t = s.Platform.Type
			}
			switch {
			case fs.Changed("platform") && !slices.Contains(profiles.Types(), t):
				return fmt.Errorf("--platform %q is not a platform: use one of %s", c.platform, platformNames())
			case c.file == "" && !fs.Changed("platform"):
				return fmt.Errorf("--platform is required: one of %s (or give -f FILE)", platformNames())
			}
			spec, err := c.spec(fs, t)
			if err != nil {
				return err
			}
			if body.Spec, err = mergeSpec(body.Spec, spec); err != nil {
				return err
			}
			cl, err := f.client().CreateCluster(cmd.Context(), body)
			if err != nil {
				return err
			}
			return f.print(cmd, cl, func(w io.Writer) { clusterTable(w, []*kpool.Cluster{cl}, f.wide(), f.clock.Now()) })
		},
	}
	c.register(cmd.Flags())
	return cmd
}

func newClusterList(f *clientFlags) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the clusters you can see",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := f.client()
			var list *api.ClusterList
			opts := l.options()
			err := pages(l.all, opts, func(o service.ListOptions) (string, error) {
				page, err := c.Clusters(cmd.Context(), o)
				if err != nil {
					return "", err
				}
				if list == nil {
					list = page
				} else {
					list.Clusters = append(list.Clusters, page.Clusters...)
				}
				list.Next = page.Next
				return page.Next, nil
			})
			if err != nil {
				return err
			}
			if f.table() && len(list.Clusters) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "No clusters found.")
				return nil
			}
			l.more(cmd, len(list.Clusters), list.Total, list.Next)
			return f.print(cmd, list, func(w io.Writer) { clusterTable(w, list.Clusters, f.wide(), f.clock.Now()) })
		},
	}
	l.register(cmd.Flags())
	return cmd
}

func newClusterGet(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show a cluster",
		Args:  idArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client().Cluster(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			facts, err := f.client().ClusterFacts(cmd.Context(), c.ID)
			if err != nil {
				return err
			}
			now := f.clock.Now()
			out := clusterWithFacts{Cluster: c, Facts: facts}
			if facts != nil {
				out.FactsAge = facts.Age(now).Round(time.Second).String()
			}
			return f.print(cmd, out, func(w io.Writer) {
				clusterView(w, c, now)
				factsView(w, facts, now)
			})
		},
	}
}

func newClusterDelete(f *clientFlags) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete clusters' registrations (with --force, their node pools too; asking first on a terminal)",
		Args:  idArg("cluster"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			c := f.client()
			name := clusterName(cmd.Context(), c, id) // what it prints says
			cl, gone, err := c.DeleteCluster(cmd.Context(), id, force)
			var e *kpool.Error
			if errors.As(err, &e) && e.Code == kpool.CodeConflict {
				// The API's advice, in the CLI's words.
				e.Details = strings.ReplaceAll(e.Details, "with force=true", "with --force")
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if gone {
				fmt.Fprintf(out, "cluster %s deleted\n", name)
				return nil
			}
			if !f.table() {
				return f.print(cmd, cl, nil)
			}
			// The pools that remain are the ones being deleted.
			if l, err := c.NodePools(cmd.Context(), service.ListOptions{ClusterID: cl.ID, Limit: 1}); err == nil {
				fmt.Fprintf(out, "cluster %s is being deleted (waiting for %s)\n", name, plural(l.Total, "node pool"))
			} else {
				fmt.Fprintf(out, "cluster %s is being deleted (%s)\n", name, cl.Status.Message)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "also delete the cluster's node pools")
	return cmd
}
