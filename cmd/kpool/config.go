package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// Contexts, as kubectl has them: a config file names servers and who you
// are there, and which one commands use. Flags beat the environment, which
// beats the context. A context never holds a token itself: it names the
// file or the environment variable that does (secrets are not stored in
// plain text by kpool).

// config is the CLI's config file.
type config struct {
	CurrentContext string           `json:"current-context,omitempty"`
	Contexts       map[string]*kctx `json:"contexts,omitempty"`
}

// kctx is a context: one server and who you are there.
type kctx struct {
	Server string `json:"server,omitempty"`
	// TokenFile and TokenEnv say where the API token is: a file (as a
	// secret manager or kpool token create > file writes it), or a
	// variable.
	TokenFile string `json:"token-file,omitempty"`
	TokenEnv  string `json:"token-env,omitempty"`
	// User is the e-mail address sent to a server in --auth header mode.
	User string `json:"user,omitempty"`
	// Cluster is the default cluster (name or ID) of commands that take
	// one: nodepool create, and a pool named by its name.
	Cluster string `json:"cluster,omitempty"`
}

// configPath is where the config file is: $KPOOL_CONFIG, or kpool/config.yaml
// in the user's config directory (~/.config on Linux).
func configPath() (string, error) {
	if p := os.Getenv("KPOOL_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory (set KPOOL_CONFIG): %v", err)
	}
	return filepath.Join(dir, "kpool", "config.yaml"), nil
}

// loadConfig reads the config file; a missing one is an empty config.
func loadConfig() (*config, string, error) {
	path, err := configPath()
	if err != nil {
		return nil, "", err
	}
	cfg := &config{Contexts: map[string]*kctx{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		return nil, path, fmt.Errorf("%s: %v", path, err)
	}
	if cfg.Contexts == nil {
		cfg.Contexts = map[string]*kctx{}
	}
	return cfg, path, nil
}

func (c *config) save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// token reads a context's token from its file or variable.
func (c *kctx) token() (string, error) {
	switch {
	case c.TokenFile != "":
		p := c.TokenFile
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, rest)
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("the context's token-file: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	case c.TokenEnv != "":
		v := strings.TrimSpace(os.Getenv(c.TokenEnv))
		if v == "" {
			return "", fmt.Errorf("the context's token-env names %s, which is empty or unset", c.TokenEnv)
		}
		return v, nil
	}
	return "", nil
}

// fromContext fills what neither a flag nor the environment gave from the
// context (--context, $KPOOL_CONTEXT, or the current one).
func (f *clientFlags) fromContext(cmd *cobra.Command) error {
	cfg, path, err := loadConfig()
	if err != nil {
		return err
	}
	name := f.context
	if name == "" {
		name = os.Getenv("KPOOL_CONTEXT")
	}
	if name == "" {
		name = cfg.CurrentContext
	}
	if name == "" {
		return nil
	}
	c, ok := cfg.Contexts[name]
	if !ok {
		return fmt.Errorf("no context %q in %s: kpool config get-contexts lists them", name, path)
	}
	given := func(flag, envName string) bool {
		return cmd.Flags().Changed(flag) || os.Getenv(envName) != ""
	}
	if c.Server != "" && !given("server", "KPOOL_SERVER") {
		f.server = c.Server
	}
	if c.User != "" && !given("user", "KPOOL_USER") {
		f.user = c.User
	}
	if (c.TokenFile != "" || c.TokenEnv != "") && !given("token", "KPOOL_TOKEN") && !given("user", "KPOOL_USER") {
		if f.token, err = c.token(); err != nil {
			return fmt.Errorf("context %s: %v", name, err)
		}
	}
	f.defaultCluster = c.Cluster
	return nil
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Contexts: which kpool server commands talk to, and as whom",
		Long: `Contexts name kpool servers and who you are there, in a config file
($KPOOL_CONFIG, or ~/.config/kpool/config.yaml). Flags beat the environment
(KPOOL_SERVER, KPOOL_TOKEN, KPOOL_USER), which beats the context.

A context never holds a token: it names the file (--token-file) or the
environment variable (--token-env) that does.`,
		Example: `  kpool token create --user me@example.com > ~/.config/kpool/prod.token
  kpool config set-context prod --server https://kpool.example.com --token-file ~/.config/kpool/prod.token --cluster prod-aks
  kpool config use-context prod
  kpool config get-contexts
  kpool config view`,
		RunE: groupRun,
	}
	cmd.AddCommand(newSetContext(), newUseContext(), newGetContexts(), newCurrentContext(), newDeleteContext(), newKubeCredential(), newConfigView())
	return cmd
}

func newSetContext() *cobra.Command {
	var c kctx
	var token string
	cmd := &cobra.Command{
		Use:     "set-context NAME [--server URL] [--token-file FILE | --token-env VAR] [--user EMAIL] [--cluster NAME]",
		Short:   "Create or change a context (only the fields given change)",
		Example: "  kpool config set-context dev --server http://127.0.0.1:8080 --token-env KPOOL_DEV_TOKEN",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if fs.Changed("token") {
				return errors.New("--token: a context does not keep a token in plain text; put it in a file (--token-file) or a variable (--token-env)")
			}
			if fs.Changed("token-file") && fs.Changed("token-env") {
				return errors.New("give --token-file or --token-env, not both")
			}
			if fs.Changed("server") {
				if err := (&clientFlags{server: c.Server, user: "x", output: outTable}).check(); err != nil {
					return err
				}
			}
			if fs.Changed("user") {
				if _, err := kpool.ParseEmail(c.User); err != nil {
					return fmt.Errorf("--user: %v", err)
				}
			}
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			cur, ok := cfg.Contexts[args[0]]
			if !ok {
				cur = &kctx{}
				cfg.Contexts[args[0]] = cur
			}
			for flag, set := range map[string]func(){
				"server": func() { cur.Server = c.Server }, "user": func() { cur.User = c.User }, "cluster": func() { cur.Cluster = c.Cluster },
				"token-file": func() { cur.TokenFile, cur.TokenEnv = c.TokenFile, "" }, "token-env": func() { cur.TokenEnv, cur.TokenFile = c.TokenEnv, "" },
			} {
				if fs.Changed(flag) {
					set()
				}
			}
			if cfg.CurrentContext == "" {
				cfg.CurrentContext = args[0]
			}
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Context %q set in %s.\n", args[0], path)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&c.Server, "server", "", "the kpool API server's URL")
	fs.StringVar(&c.TokenFile, "token-file", "", "a file holding your API token")
	fs.StringVar(&c.TokenEnv, "token-env", "", "an environment variable holding your API token")
	fs.StringVar(&c.User, "user", "", "your e-mail address, for a server in --auth header mode")
	fs.StringVar(&c.Cluster, "cluster", "", "the default cluster (name or ID)")
	fs.StringVar(&token, "token", "", "refused: a context keeps no token in plain text")
	_ = fs.MarkHidden("token")
	return cmd
}

func newUseContext() *cobra.Command {
	return &cobra.Command{
		Use:               "use-context NAME",
		Short:             "Make a context the current one",
		Example:           "  kpool config use-context prod",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := editContext(args[0], func(cfg *config) { cfg.CurrentContext = args[0] }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Switched to context %q.\n", args[0])
			return nil
		},
	}
}

func newGetContexts() *cobra.Command {
	return &cobra.Command{
		Use:     "get-contexts",
		Short:   "List the contexts (* marks the current one)",
		Example: "  kpool config get-contexts",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tIDENTITY\tCLUSTER")
			for _, n := range kpool.SortedKeys(cfg.Contexts) {
				c := cfg.Contexts[n]
				mark := ""
				if n == cfg.CurrentContext {
					mark = "*"
				}
				who := c.User
				switch {
				case c.TokenFile != "":
					who = "token in " + c.TokenFile
				case c.TokenEnv != "":
					who = "token in $" + c.TokenEnv
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, n, orDash(c.Server), orDash(who), orDash(c.Cluster))
			}
			return tw.Flush()
		},
	}
}

func newCurrentContext() *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the current context's name",
		Example: "  kpool config current-context",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return errors.New("no current context: kpool config use-context NAME sets one")
			}
			_, err = io.WriteString(cmd.OutOrStdout(), cfg.CurrentContext+"\n")
			return err
		},
	}
}

func newDeleteContext() *cobra.Command {
	return &cobra.Command{
		Use:               "delete-context NAME",
		Short:             "Delete a context",
		Example:           "  kpool config delete-context old",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			return editContext(args[0], func(cfg *config) {
				delete(cfg.Contexts, args[0])
				if cfg.CurrentContext == args[0] {
					cfg.CurrentContext = ""
				}
			})
		},
	}
}

// editContext changes the config file through fn, once it has checked that
// the context name exists.
func editContext(name string, fn func(*config)) error {
	cfg, path, err := loadConfig()
	if err != nil {
		return err
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return fmt.Errorf("no context %q in %s: kpool config get-contexts lists them", name, path)
	}
	fn(cfg)
	return cfg.save(path)
}
