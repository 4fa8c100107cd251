package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// Shell completion: cobra's kpool completion bash|zsh|fish|powershell, with
// cluster and pool names and IDs completed from the server for --cluster
// and for the NAME|ID argument of the commands that take one. The server is
// the one the command line (or the environment) names, with its
// credentials; when it cannot be asked, nothing is completed and nothing
// is printed.

// completionTimeout bounds a completion's requests: a shell waits on them.
const completionTimeout = 5 * time.Second

// addCompletion adds the completion command (with examples) and the
// dynamic completions of root's commands.
func addCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	// cobra's scripts go to the writer root had when the command was made;
	// they go to the command's, as every other command's output does.
	if comp, _, err := root.Find([]string{"completion"}); err == nil && comp != root {
		for _, c := range comp.Commands() {
			c.RunE, c.Run = writeScript, nil
		}
	}
	walk(root, func(c *cobra.Command) {
		if c.Flags().Lookup("cluster") != nil && c.Flag("server") != nil {
			_ = c.RegisterFlagCompletionFunc("cluster", completeClusters)
			if c.Flags().Lookup("machine-type") != nil {
				_ = c.RegisterFlagCompletionFunc("machine-type", completeMachineTypes)
			}
		}
		completeValues(c)
		if !strings.Contains(c.Use, "NAME|ID") || c.ValidArgsFunction != nil || c.Parent() == nil {
			return
		}
		switch c.Parent().Name() {
		case "nodepool":
			c.ValidArgsFunction = completePools
		case "cluster":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) > 0 && !several(cmd) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return completeClusters(cmd, args, toComplete)
			}
		}
	})
}

// several reports whether cmd takes several names (get, delete).
func several(cmd *cobra.Command) bool { return strings.Contains(cmd.Use, "NAME|ID...") }

// writeScript writes the completion script of the shell cmd is named for.
func writeScript(cmd *cobra.Command, _ []string) error {
	out, root := cmd.OutOrStdout(), cmd.Root()
	desc := true
	if fl := cmd.Flags().Lookup("no-descriptions"); fl != nil && fl.Value.String() == "true" {
		desc = false
	}
	switch cmd.Name() {
	case "bash":
		return root.GenBashCompletionV2(out, desc)
	case "zsh":
		if !desc {
			return root.GenZshCompletionNoDesc(out)
		}
		return root.GenZshCompletion(out)
	case "fish":
		return root.GenFishCompletion(out, desc)
	case "powershell":
		if !desc {
			return root.GenPowerShellCompletion(out)
		}
		return root.GenPowerShellCompletionWithDesc(out)
	}
	return fmt.Errorf("no completion script for %s", cmd.Name())
}

// walk calls fn on cmd and every command under it.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

// completionClient is a client of the server cmd's flags, the environment
// or the config file's context name, with the context's default cluster;
// nil when they name none that can be asked.
func completionClient(cmd *cobra.Command) (*api.Client, string) {
	// Completion runs no hooks of cmd: the environment is read here.
	if applyEnv(cmd) != nil {
		return nil, ""
	}
	get := func(name string) string {
		if fl := cmd.Flag(name); fl != nil {
			return strings.TrimSpace(fl.Value.String())
		}
		return ""
	}
	f := clientFlags{server: get("server"), user: get("user"), token: get("token"), context: get("context"), output: outTable}
	if f.fromContext(cmd) != nil || f.check() != nil {
		return nil, ""
	}
	return f.client(), f.defaultCluster
}

// completeClusters completes a cluster's name or ID.
func completeClusters(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, _ := completionClient(cmd)
	if c == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	var out []cobra.Completion
	err := pages(true, service.ListOptions{Limit: kpool.MaxLimit}, func(o service.ListOptions) (string, error) {
		page, err := c.Clusters(ctx, o)
		if err != nil {
			return "", err
		}
		for _, cl := range page.Clusters {
			out = appendMatch(out, toComplete, cl.Name, fmt.Sprintf("%s cluster %s", cl.Spec.Platform.Type, cl.ID))
			out = appendMatch(out, toComplete, cl.ID, fmt.Sprintf("%s cluster %s", cl.Spec.Platform.Type, cl.Name))
		}
		return page.Next, nil
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeMachineTypes completes a machine type the --cluster's (or the
// context's cluster's) provider offers, as kpool learnt it, with its CPUs,
// memory and GPUs; nothing before a cluster is named or learnt.
func completeMachineTypes(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	f := completionFacts(cmd)
	if f == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, m := range f.MachineTypes {
		desc := fmt.Sprintf("%d CPUs, %d MiB", m.CPUs, m.MemoryMiB)
		if m.GPUs > 0 {
			desc += fmt.Sprintf(", %d GPUs", m.GPUs)
		}
		if len(m.Zones) > 0 {
			desc += ", zones " + strings.Join(m.Zones, " ")
		}
		out = appendMatch(out, toComplete, m.Name, desc)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completePools completes a pool's name or ID, of the --cluster given (by
// name or ID), or else the context's cluster, if any.
func completePools(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 && !several(cmd) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, cluster := completionClient(cmd)
	if c == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	o := service.ListOptions{Limit: kpool.MaxLimit}
	if fl := cmd.Flags().Lookup("cluster"); fl != nil && fl.Value.String() != "" {
		cluster = fl.Value.String()
	}
	if cluster != "" { // as the command finds a pool by its name
		id, err := c.ClusterID(ctx, cluster)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		o.ClusterID = id
	}
	var out []cobra.Completion
	names := &shown{ctx: ctx, client: c, pools: map[string]string{}}
	err := pages(true, o, func(o service.ListOptions) (string, error) {
		page, err := c.NodePools(ctx, o)
		if err != nil {
			return "", err
		}
		for _, p := range page.NodePools {
			in := names.cluster(p.ClusterID)
			out = appendMatch(out, toComplete, p.Name, fmt.Sprintf("node pool %s in cluster %s", p.ID, in))
			out = appendMatch(out, toComplete, p.ID, fmt.Sprintf("node pool %s in cluster %s", p.Name, in))
		}
		return page.Next, nil
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// appendMatch appends value (with its description) when it starts with
// prefix.
func appendMatch(out []cobra.Completion, prefix, value, desc string) []cobra.Completion {
	if value == "" || !strings.HasPrefix(value, prefix) {
		return out
	}
	return append(out, cobra.CompletionWithDesc(value, desc))
}

// completionFacts is what kpool learnt of the --cluster (or the context's
// cluster): its zones and machine types; nil before a cluster is named or
// learnt, or when the server does not answer in time.
func completionFacts(cmd *cobra.Command) *kpool.ClusterFacts {
	c, cluster := completionClient(cmd)
	if fl := cmd.Flags().Lookup("cluster"); fl != nil && fl.Value.String() != "" {
		cluster = fl.Value.String()
	}
	if c == nil || cluster == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	id, err := c.ClusterID(ctx, cluster)
	if err != nil {
		return nil
	}
	f, err := c.ClusterFacts(ctx, id)
	if err != nil {
		return nil
	}
	return f
}
