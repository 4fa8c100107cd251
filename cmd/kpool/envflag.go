package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flags the environment can set (KPOOL_TOKEN for --token, KPOOL_DATABASE
// for --database, …). A flag's default, the one --help shows, is always the
// built-in one: the variables are read when the command runs, never when
// the flags are made, so that no help text and no usage line shows what a
// variable holds, such as an API token or a database URL with its
// password. Flags beat the environment: a flag given on the command line
// is left as it is.

// envAnnotation is the flag annotation that names a flag's variable.
const envAnnotation = "kpool_env"

// bindEnv binds flags of fs (by name) to the environment variables that
// set them when the command line does not. Every flag must exist.
func bindEnv(fs *pflag.FlagSet, vars map[string]string) {
	for name, v := range vars {
		if err := fs.SetAnnotation(name, envAnnotation, []string{v}); err != nil {
			panic(err) // a flag that does not exist: a mistake in the code
		}
	}
}

// envOf is the variable bound to fl, or "".
func envOf(fl *pflag.Flag) string {
	if v := fl.Annotations[envAnnotation]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// applyEnv sets each flag of cmd that the command line did not give from
// its variable, when that is set and not empty. The flag is not marked
// changed, so that code asking whether the user gave it still learns only
// that.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		name := envOf(fl)
		if err != nil || name == "" || fl.Changed {
			return
		}
		v := os.Getenv(name)
		if v == "" {
			return
		}
		if e := fl.Value.Set(v); e != nil {
			err = envError(name, v, fl, e)
		}
	})
	return err
}

// envError says that variable name's value v is not one fl takes. It
// quotes v only for the kinds of flags that hold no secret (numbers,
// durations, booleans), which are the only ones that can refuse a value;
// a whole number out of the flag's range gets the flag's own reason.
func envError(name, v string, fl *pflag.Flag, refused error) error {
	kind := map[string]string{"duration": "a duration such as 1m or 30s", "bool": "true or false",
		"int": "a whole number", "float64": "a number"}[fl.Value.Type()]
	if _, err := strconv.Atoi(v); err == nil && fl.Value.Type() == "int" {
		return fmt.Errorf("%s %q: %v (as --%s takes)", name, v, refused, fl.Name)
	}
	if kind == "" {
		return fmt.Errorf("%s: not a value --%s takes", name, fl.Name)
	}
	return fmt.Errorf("%s %q: not %s (as --%s takes)", name, v, kind, fl.Name)
}

// setDefault changes the default of the flag name of fs (its value and
// what --help shows) without marking it given, so that its variable still
// beats it.
func setDefault(fs *pflag.FlagSet, name, value string) {
	fl := fs.Lookup(name)
	if err := fl.Value.Set(value); err != nil {
		panic(err) // a default the flag does not take: a mistake in the code
	}
	fl.DefValue = value
}

// readEnvFirst makes every command under root (root included) read its
// flags' variables before anything else of it runs. cobra runs only the
// nearest persistent pre-run hook (the command's own or its nearest
// parent's), so each command gets its own, which reads the variables and
// then runs the one cobra would have run. Commands cobra adds when it
// executes (help, __complete) run root's.
func readEnvFirst(root *cobra.Command) {
	var all []*cobra.Command
	walk(root, func(c *cobra.Command) { all = append(all, c) })
	next := make(map[*cobra.Command]func(*cobra.Command, []string) error, len(all))
	for _, c := range all {
		next[c] = persistentPreRun(c)
	}
	for _, c := range all {
		then := next[c]
		c.PersistentPreRun = nil
		c.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd); err != nil {
				return err
			}
			if then == nil {
				return nil
			}
			return then(cmd, args)
		}
	}
}

// persistentPreRun is the persistent pre-run hook cobra runs for c: its
// own or its nearest parent's; nil when there is none.
func persistentPreRun(c *cobra.Command) func(*cobra.Command, []string) error {
	for p := c; p != nil; p = p.Parent() {
		switch {
		case p.PersistentPreRunE != nil:
			return p.PersistentPreRunE
		case p.PersistentPreRun != nil:
			run := p.PersistentPreRun
			return func(cmd *cobra.Command, args []string) error { run(cmd, args); return nil }
		}
	}
	return nil
}
