package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/api"
)

// versions is what kpool version reports: this binary's, and the server's
// when asked.
type versions struct {
	Client api.Version  `json:"client"`
	Server *api.Version `json:"server,omitempty"`
}

func newVersionCmd() *cobra.Command {
	var server, output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show kpool's version, and the server's with --server",
		Long: `Show this binary's module version ("(devel)" when it was not built from a
tagged module), VCS commit and Go version. With --server (or KPOOL_SERVER)
also the server's, read from its /version, which takes no credentials.`,
		Example: `  kpool version
  kpool version --server https://kpool.example.com
  kpool version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case outTable, outJSON, outYAML:
			default:
				return fmt.Errorf("--output %q is not a format: use table, json or yaml", output)
			}
			v := versions{Client: api.BuildVersion()}
			var serverErr error
			if server != "" {
				u, err := url.Parse(server)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return fmt.Errorf("--server %q is not a URL such as http://127.0.0.1:8080", server)
				}
				ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
				defer cancel()
				sv, err := api.NewClient(server, "").Version(ctx)
				if err != nil {
					// The client's version is still shown.
					serverErr = fmt.Errorf("the server's version (%s/version): %w", strings.TrimRight(server, "/"), err)
				} else {
					v.Server = sv
				}
			}
			f := clientFlags{output: output}
			err := f.print(cmd, v, func(w io.Writer) {
				fmt.Fprintf(w, "Client:\t%s\n", versionLine(v.Client))
				if v.Server != nil {
					fmt.Fprintf(w, "Server:\t%s\t(%s)\n", versionLine(*v.Server), strings.TrimRight(server, "/"))
				}
			})
			if err != nil {
				return err
			}
			return serverErr
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&server, "server", "", "URL of a kpool API server whose version to show too (KPOOL_SERVER)")
	bindEnv(fs, map[string]string{"server": "KPOOL_SERVER"})
	fs.StringVarP(&output, "output", "o", outTable, "output format: table, json or yaml")
	return cmd
}

// clientVersion is what kpool version prints without --server, and kpool
// --version too.
func clientVersion() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	fmt.Fprintf(tw, "Client:\t%s\n", versionLine(api.BuildVersion()))
	_ = tw.Flush()
	return b.String()
}

// versionLine is "v0.17.0 commit 1a2e24a… go1.26.8".
func versionLine(v api.Version) string {
	commit := v.Commit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s\tcommit %s\t%s", v.Version, commit, v.Go)
}
