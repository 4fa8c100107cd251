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
	a := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "diff -f FILE [--prune [-l SELECTOR]]",
		Short: "Show what kpool apply -f FILE would change",
		Long: `Show what kpool apply -f FILE would change: for each pool of the file, its
spec as it is (---) and as the apply would leave it (+++), field by field,
as the server's dry run computes it (with its defaults; fields the file
leaves out return to theirs). A pool to be created is diffed against
nothing; with --prune (and -l), a pool to be deleted against nothing too.

The exit code is that of kubectl diff: 0 when nothing would change, 1 when
something would (a replacement included: one that the pool's
updateStrategy would refuse is shown with a note saying how to allow it),
greater than 1 (2) when the file could not be diffed (such as a document
that is invalid or names a cluster not found).`,
		Example: `  # What would kpool apply -f pools.yaml change?
  kpool diff -f pools.yaml

  # In a script: apply only when something differs
  kpool diff -f pools.yaml >/dev/null || kpool apply -f pools.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDiff(cmd, f, a) },
	}
	f.register(cmd)
	a.register(cmd.Flags(), "show as deleted")
	return cmd
}

// runDiff writes the diff of every pool and exits as kubectl diff does.
func runDiff(cmd *cobra.Command, f *clientFlags, a *applyFlags) error {
	docs, o, err := a.options(cmd, f, "diff")
	if err != nil {
		return &exitError{code: diffErrorExit, err: err}
	}
	o.DryRun = true
	rep, err := apply.Run(cmd.Context(), f.client(), docs, o)
	if err != nil {
		return &exitError{code: diffErrorExit, err: err}
	}
	differs, failed := false, 0
	for _, r := range rep.Results {
		switch {
		case r.Blocked():
			differs = true
			blockedDiff(cmd.OutOrStdout(), r)
			fmt.Fprintf(cmd.ErrOrStderr(), "note: nodepool %s: apply would refuse this change: %s\n", r.Label(), r.Note)
		case r.Action == apply.Refused:
			failed++
			diffError(cmd.ErrOrStderr(), r)
		case specDiff(cmd.OutOrStdout(), r):
			differs = true
		}
	}
	switch {
	case failed > 0:
		return &exitError{code: diffErrorExit, err: fmt.Errorf("%d of %d node pools could not be diffed", failed, len(rep.Results))}
	case differs:
		return quietExit(1)
	}
	return nil
}

// diffError writes why a pool could not be diffed.
func diffError(w io.Writer, r apply.Result) {
	where := ""
	if r.Document != "" {
		where = " (" + r.Document + ")"
	}
	fmt.Fprintf(w, "nodepool %s%s: %s: %s\n", r.Label(), where, r.Error.Code, r.Error.Message)
	for _, fe := range r.Error.Fields {
		fmt.Fprintf(w, "  %s: %s\n", fe.Field, oneLine(fe.Reason))
	}
	if r.Error.Details != "" && len(r.Error.Fields) == 0 {
		fmt.Fprintf(w, "  %s\n", oneLine(r.Error.Details))
	}
}

// specDiff writes the unified-style diff of one pool's spec, live against
// after the apply (r.NodePool; nothing for a delete), and reports whether
// they differ.
func specDiff(w io.Writer, r apply.Result) bool {
	var ds []apply.Difference
	from, to := "nodepool "+r.Label()+" (live)", "nodepool "+r.Label()+" (file)"
	switch r.Action {
	case apply.Delete:
		to = "/dev/null"
		lines := apply.Fields("spec", r.Live.Spec)
		for _, k := range sortedKeys(lines) {
			ds = append(ds, apply.Difference{Field: k, Live: lines[k]})
		}
	case apply.Create:
		from = "/dev/null"
		fallthrough
	default:
		ds = r.Differences()
	}
	if len(ds) == 0 {
		return false
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, to)
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

// blockedDiff writes the diff of a change apply would refuse: the plan's
// rows, as the server does not compute the pool after it.
func blockedDiff(w io.Writer, r apply.Result) {
	fmt.Fprintf(w, "--- nodepool %s (live)\n+++ nodepool %s (file)\n", r.Label(), r.Label())
	for _, c := range r.Plan.Changes {
		if c.From != nil {
			fmt.Fprintf(w, "-%s: %s\n", c.Field, jsonValue(c.From))
		}
		if c.To != nil {
			fmt.Fprintf(w, "+%s: %s\n", c.Field, jsonValue(c.To))
		}
	}
}

// isQuiet reports err's quiet exit code, if it is one.
func isQuiet(err error) (int, bool) {
	var q quietExit
	if errors.As(err, &q) {
		return int(q), true
	}
	return 0, false
}
