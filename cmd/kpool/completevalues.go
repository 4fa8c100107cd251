package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

// Completion of flag values that are one of a few words (-o, --mode,
// --platform…), context names, and a cluster's zones: never file names.

// outputs are -o's values on the client commands; those ending in = take
// a template after them.
var outputs = []string{outTable, outWide, outJSON, outYAML, outName, "jsonpath=", "custom-columns=", "go-template="}

// enumFlags are the flags that take one of a few words, by flag name.
var enumFlags = map[string]func() []string{
	"mode":        func() []string { return []string{kpool.ModeSystem, kpool.ModeUser} },
	"platform":    func() []string { return typeNames(profiles.Types()) },
	"replacement": func() []string { return []string{kpool.ReplacementRefuse, kpool.ReplacementSurge} },
	"on-stuck":    func() []string { return []string{kpool.OnStuckStop, kpool.OnStuckWait, kpool.OnStuckForce} },
	"health": func() []string {
		return []string{string(kpool.HealthHealthy), string(kpool.HealthUnhealthy), string(kpool.HealthUnknown)}
	},
	"role": func() []string {
		return []string{string(kpool.RoleUser), string(kpool.RoleAdmin), string(kpool.RoleController)}
	},
	"log-format": func() []string { return []string{"text", "json"} },
	"auth":       func() []string { return []string{auth.AuthToken, auth.AuthHeader} },
}

// completeValues registers the completions of c's own flags (local and
// persistent) that take one of a few words, a context, or zones.
func completeValues(c *cobra.Command) {
	own := func(name string) *pflag.Flag {
		if fl := c.Flags().Lookup(name); fl != nil {
			return fl
		}
		return c.PersistentFlags().Lookup(name)
	}
	register := func(name string, fn cobra.CompletionFunc) {
		if own(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fn)
		}
	}
	for name, words := range enumFlags {
		register(name, fixed(words))
	}
	if fl := own("status"); fl != nil && strings.Contains(fl.Usage, "phase") {
		register("status", fixed(func() []string {
			return []string{string(kpool.PhasePending), string(kpool.PhaseProvisioning), string(kpool.PhaseReady), string(kpool.PhaseUpdating),
				string(kpool.PhaseDegraded), string(kpool.PhaseFailed), string(kpool.PhaseDeleting)}
		}))
	}
	if fl := own("output"); fl != nil {
		words := outputs
		if !strings.Contains(fl.Usage, "wide") { // version's and config view's
			words = []string{outTable, outJSON, outYAML}
			if fl.DefValue == outYAML {
				words = []string{outYAML, outJSON}
			}
		}
		register("output", fixed(func() []string { return words }))
	}
	register("context", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeContexts(nil, nil, toComplete)
	})
	if own("zones") != nil && own("cluster") != nil {
		register("zones", completeZones)
	}
}

// fixed completes one of words; after a word ending in = (jsonpath=) no
// space is added, for the template that follows.
func fixed(words func() []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		open := len(toComplete) > 0
		for _, w := range words() {
			if strings.HasPrefix(w, toComplete) {
				out = append(out, w)
				open = open && strings.HasSuffix(w, "=")
			}
		}
		if open || (len(out) > 0 && allOpen(out)) {
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func allOpen(words []string) bool {
	for _, w := range words {
		if !strings.HasSuffix(w, "=") {
			return false
		}
	}
	return true
}

// completeZones completes --zones (a comma-separated list) with the zones
// kpool learnt of the --cluster (or the context's cluster); nothing before
// one is named or learnt.
func completeZones(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	f := completionFacts(cmd)
	if f == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	given := strings.Split(head, ",")
	var out []cobra.Completion
	for _, z := range f.Zones {
		if strings.HasPrefix(z, last) && !slices.Contains(given, z) {
			out = append(out, head+z)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
