// Command kpool is the kpool control plane: the API server (serve), schema
// migration (migrate) and the client commands (cluster, nodepool).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/scrub"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRoot().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err (with the server's code for API errors) and returns
// the process exit code: 0 for success, 1 for an error, and the code an
// exitError carries (such as 2 when --wait times out). What it prints is
// scrubbed of secrets, as the log is.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if code, ok := isQuiet(err); ok {
		return code
	}
	stderr = scrubbed{stderr}
	code := 1
	var x *exitError
	if errors.As(err, &x) {
		code = x.code
	}
	var e *kpool.Error
	if errors.As(err, &e) {
		fmt.Fprintf(stderr, "Error: %s: %s\n", e.Code, e.Message)
		if e.Details != "" && len(e.Fields) == 0 {
			fmt.Fprintf(stderr, "  %s\n", e.Details)
		}
		for _, f := range e.Fields {
			fmt.Fprintf(stderr, "  %s: %s\n", f.Field, f.Reason)
		}
		return code
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return code
}

// newRoot is the kpool command on the wall clock.
func newRoot() *cobra.Command { return newRootOn(clock{}) }

// newRootOn is the kpool command with its client commands on clk.
func newRootOn(clk clock) *cobra.Command {
	root := &cobra.Command{
		Use:           "kpool",
		Short:         "kpool manages Kubernetes node pools across clouds",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version as kubectl's: what kpool version prints of this binary
	// (no -v: kubectl's -v is verbosity).
	root.Version = clientVersion()
	root.SetVersionTemplate("{{.Version}}")
	root.Flags().Bool("version", false, "show kpool's version (kpool version --server also asks the server)")
	root.AddCommand(newServe(), newController(), newDev(), newMigrate(), newToken(), newCloudsim(), newPlace(), newConfigCmd(), newVersionCmd())
	addClientCommands(root, clk)
	addCompletion(root)
	addExamples(root)
	readEnvFirst(root)
	return root
}

// scrubbed writes what it is given with the secrets scrub recognises
// hidden; each write must be whole lines.
type scrubbed struct{ w io.Writer }

func (s scrubbed) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, scrub.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
