package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/service"
)

// addClientCommands adds the cluster and nodepool commands, on clk.
func addClientCommands(root *cobra.Command, clk clock) {
	root.AddCommand(newClusterCmd(clk), newNodePoolCmd(clk), newLogicalPoolCmd(clk), newEventsCmd(), newApplyCmd(), newDiffCmd())
}

// Output formats of -o.
const (
	outTable = "table"
	outJSON  = "json"
	outYAML  = "yaml"
)

// clientFlags are the persistent flags of the client commands.
type clientFlags struct {
	server string
	user   string
	token  string
	output string
	// noHeaders drops tables' headers; sortBy sorts lists by a JSONPath.
	noHeaders bool
	sortBy    string
	// context names the config file's context to use; defaultCluster is
	// its cluster.
	context, defaultCluster string
	// clock is the root command's: tables' ages and --wait's polls.
	clock clock
	// collected, when not nil, takes what print would write as JSON or
	// YAML: a get of several names prints them as one list (gather).
	collected *[]any
}

// register adds the flags to cmd and checks them before any subcommand runs.
func (f *clientFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", "http://127.0.0.1:8080", "URL of the kpool API server (KPOOL_SERVER)")
	pf.StringVar(&f.token, "token", "", "your API token, sent as Authorization: Bearer (KPOOL_TOKEN); prefer the variable, as flags show in process lists")
	pf.StringVar(&f.user, "user", "", "your e-mail address, sent as X-User-Email to a server in --auth header mode (KPOOL_USER)")
	pf.StringVarP(&f.output, "output", "o", outTable, "output format: table, wide, json, yaml, name, jsonpath=TEMPLATE (k8s JSONPath, such as jsonpath='{.nodepools[*].name}'), custom-columns=NAME:.name,NODES:.spec.nodeCount, go-template=TEMPLATE, or custom-columns-file=FILE, go-template-file=FILE")
	pf.BoolVar(&f.noHeaders, "no-headers", false, "print tables without their header line")
	pf.StringVar(&f.context, "context", "", "the config file's context to use (KPOOL_CONTEXT; default: the current one)")
	pf.StringVar(&f.sortBy, "sort-by", "", "sort lists by this JSONPath of each item, such as .name or .status.phase")
	bindEnv(pf, map[string]string{"server": "KPOOL_SERVER", "token": "KPOOL_TOKEN", "user": "KPOOL_USER", "context": "KPOOL_CONTEXT"})
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if c.HasSubCommands() {
			return nil // a command group only prints its help
		}
		if err := f.fromContext(c); err != nil {
			return err
		}
		return f.check()
	}
}

// groupRun runs a command group such as kpool cluster: it prints the help,
// or refuses an unknown subcommand.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q for %q: see %s --help", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return cmd.Help()
}

func (f *clientFlags) check() error {
	if err := checkOutput(f.output, f.sortBy); err != nil {
		return err
	}
	if strings.TrimSpace(f.user) == "" && strings.TrimSpace(f.token) == "" {
		return errors.New("set KPOOL_TOKEN (or --token) to your API token, or, for a server in --auth header mode, KPOOL_USER (or --user) to your e-mail address")
	}
	u, err := url.Parse(f.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q is not a URL such as http://127.0.0.1:8080", f.server)
	}
	return nil
}

func (f *clientFlags) client() *api.Client {
	c := api.NewClient(f.server, strings.TrimSpace(f.user))
	c.Token = strings.TrimSpace(f.token)
	return c
}

// writer is client for a command that writes: the server's warnings (such
// as a field stored but not applied) go to the command's stderr.
func (f *clientFlags) writer(cmd *cobra.Command) *api.Client {
	c := f.client()
	c.OnWarning = func(text string) { fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", text) }
	return c
}

// idArg accepts exactly one positional argument, the ID of a kind of object.
func idArg(kind string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch len(args) {
		case 1:
			if args[0] == "" {
				return fmt.Errorf("%s: the %s ID must not be empty", cmd.CommandPath(), kind)
			}
			return nil
		case 0:
			return fmt.Errorf("%s: give the %s ID", cmd.CommandPath(), kind)
		}
		return fmt.Errorf("%s: takes one %s ID, got %d arguments (%s)", cmd.CommandPath(), kind, len(args), strings.Join(args, " "))
	}
}

// nameArg accepts an optional NAME (required unless -f gives one).
func nameArg(kind string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return fmt.Errorf("%s: takes one %s NAME, got %d arguments (%s)", cmd.CommandPath(), kind, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// readFile reads a file, or the command's stdin for "-", and says how
// errors name it ("stdin" or the file's name).
func readFile(cmd *cobra.Command, name string) (data []byte, shown string, err error) {
	if name == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
		return data, "stdin", err
	}
	data, err = os.ReadFile(name)
	return data, name, err
}

// decodeFile reads a YAML or JSON file ("-" for stdin) into v, refusing
// fields that v does not have.
func decodeFile(cmd *cobra.Command, name string, v any) error {
	data, shown, err := readFile(cmd, name)
	if err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: not YAML or JSON: %v", shown, err)
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
		return fmt.Errorf("%s is empty", shown)
	}
	var fe kpool.FieldErrors
	if !jsondoc.Decode(js, v, "", fe.Report) {
		e := fe.Err().(*kpool.Error)
		e.Message = shown + ": " + e.Message
		return e
	}
	return nil
}

// mergeSpec merges the object that flags make over a base spec (from a
// file) with the rules of a PUT: objects merge key by key, anything else
// replaces. With no flags the base is returned as it is.
func mergeSpec(base json.RawMessage, flags map[string]any) (json.RawMessage, error) {
	if len(flags) == 0 {
		return base, nil
	}
	patch, err := json.Marshal(flags)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(base)) == 0 {
		return patch, nil
	}
	out, err := jsondoc.Merge(base, patch, false)
	if err != nil {
		return nil, fmt.Errorf("merging the flags into the file's spec: %v", err)
	}
	return out, nil
}

// anyChanged reports whether any of the named flags was given.
func anyChanged(fs *pflag.FlagSet, names ...string) bool {
	for _, n := range names {
		if fs.Changed(n) {
			return true
		}
	}
	return false
}

// listFlags page a list. A list shows every item, page by page, unless
// --limit or --offset asks for one page; then it says how many more there
// are.
type listFlags struct {
	limit, offset int
	all           bool
	fs            *pflag.FlagSet
}

func (l *listFlags) register(fs *pflag.FlagSet) {
	l.fs = fs
	fs.IntVar(&l.limit, "limit", 0, fmt.Sprintf("show one page of this size, 1-%d", kpool.MaxLimit))
	fs.IntVar(&l.offset, "offset", 0, "show one page, skipping this many items")
	fs.BoolVar(&l.all, "all", true, "list every item, page by page (the default unless --limit or --offset)")
}

func (l *listFlags) options() service.ListOptions {
	if l.fs != nil && (l.fs.Changed("limit") || l.fs.Changed("offset")) && !l.fs.Changed("all") {
		l.all = false
	}
	o := service.ListOptions{Limit: l.limit, Offset: l.offset}
	if l.all && o.Limit == 0 {
		o.Limit = kpool.MaxLimit
	}
	return o
}

// more tells, on stderr, that a page is not the whole list.
func (l *listFlags) more(cmd *cobra.Command, shown, total int, next string) {
	if l.all || next == "" {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Showing %d of %d: --all lists every one, --after %s the next page.\n", shown, total, next)
}

// pages calls fetch for the first page and, with all, for every following
// one by its next cursor; fetch keeps the items and returns the page's next.
func pages(all bool, o service.ListOptions, fetch func(service.ListOptions) (string, error)) error {
	next, err := fetch(o)
	for seen := map[string]bool{}; err == nil && all && next != ""; {
		if seen[next] {
			return fmt.Errorf("the server returned the cursor %q twice", next)
		}
		seen[next] = true
		o.Offset, o.After = 0, next
		next, err = fetch(o)
	}
	return err
}
