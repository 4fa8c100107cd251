package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// newConfigView is kpool config view, as kubectl config view: the config
// file's contexts. A context holds no token, only where one is (a file's
// path or a variable's name), so none is ever shown.
func newConfigView() *cobra.Command {
	var (
		output string
		minify bool
	)
	cmd := &cobra.Command{
		Use:   "view [--minify] [-o yaml|json]",
		Short: "Show the config file's contexts (where each token is, never a token)",
		Example: `  kpool config view
  kpool config view --minify -o json   # the current context only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != outYAML && output != outJSON {
				return fmt.Errorf("--output %q is not a format of config view: use yaml or json", output)
			}
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			if minify {
				name := os.Getenv("KPOOL_CONTEXT")
				if name == "" {
					name = cfg.CurrentContext
				}
				c, ok := cfg.Contexts[name]
				switch {
				case name == "":
					return fmt.Errorf("--minify shows the current context, and %s has none: kpool config use-context NAME sets one", path)
				case !ok:
					return fmt.Errorf("--minify: no context %q in %s: kpool config get-contexts lists them", name, path)
				}
				cfg = &config{CurrentContext: name, Contexts: map[string]*kctx{name: c}}
			}
			var b []byte
			if output == outJSON {
				if b, err = json.MarshalIndent(cfg, "", "  "); err == nil {
					b = append(b, '\n')
				}
			} else {
				b, err = yaml.Marshal(cfg)
			}
			if err != nil {
				return err
			}
			if len(cfg.Contexts) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s has no contexts: kpool config set-context NAME --server URL makes one\n", path)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", outYAML, "output format: yaml or json")
	fs.BoolVar(&minify, "minify", false, "only the current context ($KPOOL_CONTEXT, or the file's current-context)")
	return cmd
}

// completeContexts completes a context name of the config file.
func completeContexts(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, _, err := loadConfig()
	if err != nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range kpool.SortedKeys(cfg.Contexts) {
		c := cfg.Contexts[n]
		out = appendMatch(out, toComplete, n, orDash(c.Server))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
