package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool/apply"
)

// quietExit is an exit code with nothing to print: kpool diff's 1 when
// something differs, which is an answer, not an error.
type quietExit int

func (q quietExit) Error() string { return fmt.Sprintf("exit status %d", int(q)) }

// diffErrorExit is kpool diff's exit code when it could not tell, as
// kubectl diff's (greater than 1).
const diffErrorExit = 2

func newDiffCmd() *cobra.Command {
	f := &clientFlags{}
	var file string
	cmd := &cobra.Command{
		Use:   "diff -f FILE",
		Short: "Show what kpool apply -f FILE would change",
		Long: `Show what kpool apply -f FILE would change: for each pool of the file, its
spec as it is (---) and as the apply would leave it (+++), field by field,
as the server's dry run computes it (with its defaults, and PUT's merging).
A pool to be created is diffed against nothing.

The exit code is that of kubectl diff: 0 when nothing would change, 1 when
something would, greater than 1 (2) when a pool could not be diffed (such as
one the server would refuse).`,
		Example: `  # What would kpool apply -f pools.yaml change?
  kpool diff -f pools.yaml

  # In a script: apply only when something differs
  kpool diff -f pools.yaml >/dev/null || kpool apply -f pools.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("give -f FILE: the node pools to diff")
			}
			docs, err := readApplyFile(cmd, file)
			if err != nil {
				return &exitError{code: diffErrorExit, err: err}
			}
			differs, failed := false, 0
			for _, r := range apply.Run(cmd.Context(), f.client(), docs, f.defaultCluster, true) {
				if r.Error != nil {
					failed++
					diffError(cmd.ErrOrStderr(), r)
					if r.NodePool == nil {
						continue
					}
				}
				if specDiff(cmd.OutOrStdout(), r) {
					differs = true
				}
			}
			switch {
			case failed > 0:
				return &exitError{code: diffErrorExit, err: fmt.Errorf("%d of %d node pools could not be diffed", failed, len(docs))}
			case differs:
				return quietExit(1)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&file, "filename", "f", "", "YAML or JSON file of node pools; - reads stdin")
	return cmd
}

// diffError writes why a pool could not be diffed.
func diffError(w io.Writer, r apply.Result) {
	fmt.Fprintf(w, "nodepool %s: %s: %s\n", r.Label(), r.Error.Code, r.Error.Message)
	for _, fe := range r.Error.Fields {
		fmt.Fprintf(w, "  %s: %s\n", fe.Field, oneLine(fe.Reason))
	}
	if r.Error.Details != "" && len(r.Error.Fields) == 0 {
		fmt.Fprintf(w, "  %s\n", oneLine(r.Error.Details))
	}
}

// specDiff writes the unified-style diff of one pool's spec, live against
// after the apply (r.NodePool), and reports whether they differ.
func specDiff(w io.Writer, r apply.Result) bool {
	ds := r.Differences()
	if len(ds) == 0 {
		return false
	}
	from := "nodepool " + r.Label() + " (live)"
	if r.Live == nil {
		from = "/dev/null"
	}
	fmt.Fprintf(w, "--- %s\n+++ nodepool %s (file)\n", from, r.Label())
	for _, d := range ds {
		if d.Live != "" {
			fmt.Fprintf(w, "-%s: %s\n", d.Field, d.Live)
		}
		if d.File != "" {
			fmt.Fprintf(w, "+%s: %s\n", d.Field, d.File)
		}
	}
	return true
}

// isQuiet reports err's quiet exit code, if it is one.
func isQuiet(err error) (int, bool) {
	var q quietExit
	if errors.As(err, &q) {
		return int(q), true
	}
	return 0, false
}
