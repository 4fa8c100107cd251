package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/service"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// print writes v as JSON or YAML, or calls table with a tab-aligned writer.
func (f *clientFlags) print(cmd *cobra.Command, v any, table func(w io.Writer)) error {
	out := cmd.OutOrStdout()
	if f.sortBy != "" {
		if err := sortItems(v, f.sortBy); err != nil {
			return err
		}
	}
	switch {
	case f.output == outName:
		return printNames(out, v)
	case strings.HasPrefix(f.output, outJSONPath):
		return printPath(out, v, strings.TrimPrefix(f.output, outJSONPath))
	}
	if cols, ok, err := columnsOf(f.output); ok {
		if err != nil {
			return err
		}
		return printColumns(out, v, cols, f.noHeaders)
	}
	if t, ok, err := templateOf(f.output); ok {
		if err != nil {
			return err
		}
		return printTemplate(out, v, t)
	}
	if f.collected != nil && (f.output == outJSON || f.output == outYAML) {
		*f.collected = append(*f.collected, v)
		return nil
	}
	switch f.output {
	case outJSON:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = out.Write(append(b, '\n'))
		return err
	case outYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if f.noHeaders {
		out = &noHeader{w: out}
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	table(tw)
	return tw.Flush()
}

// wide reports whether tables show their extra columns (-o wide).
func (f *clientFlags) wide() bool { return f.output == outWide }

// age is the time from t to now as kubectl get's AGE column shows it (45s,
// 5m30s, 12m, 3h20m, 26h, 3d4h, 40d, 2y10d): apimachinery's HumanDuration.
// A t after now, which the server's clock being ahead of this one makes, is
// 0s rather than HumanDuration's <invalid>.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(max(now.Sub(t), 0))
}

// when is a time with its age at now.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339) + " (" + age(t, now) + " ago)"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// planView shows a dry run's plan: each changed field, its class at the
// provider, the values (as compact JSON, "-" when absent) and the reason,
// then a summary.
func planView(w io.Writer, p *kpool.Plan) {
	if p == nil || len(p.Changes) == 0 {
		fmt.Fprintln(w, "No changes.")
		return
	}
	fmt.Fprintln(w, "FIELD\tCLASS\tFROM\tTO\tREASON")
	for _, c := range p.Changes {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.Field, orDash(classText(p, c)), jsonValue(c.From), jsonValue(c.To), orDash(oneLine(c.Reason)))
	}
	fmt.Fprintln(w, planSummary(p))
}

// classText is a change's class as a plan shows it: a replace that the
// pool's updateStrategy carries out says how, "replace (surge 1, drain
// 30m0s)".
func classText(p *kpool.Plan, c kpool.Change) string {
	if c.Class == kpool.UpdateReplace && p.Replacement != "" {
		return string(c.Class) + " (" + p.Replacement + ")"
	}
	return string(c.Class)
}

// planSummary is one line on a plan: "provider azure (agent pool
// gpuworkers): 2 changes, rolls nodes".
func planSummary(p *kpool.Plan) string {
	where := "provider " + orDash(p.Provider)
	if p.ProviderName != "" {
		where += " (" + poolNoun(kpool.PlatformType(p.Provider)) + " " + p.ProviderName + ")"
	}
	n := len(p.Changes)
	out := fmt.Sprintf("%s: %d change", where, n)
	if n != 1 {
		out += "s"
	}
	has := map[kpool.UpdateClass]bool{}
	for _, c := range p.Changes {
		has[c.Class] = true
	}
	var effects []string
	for _, e := range []struct {
		class kpool.UpdateClass
		say   string
	}{
		{kpool.UpdateRollsNodes, "rolls nodes"},
		{kpool.UpdateNewNodesOnly, "new nodes only"},
		{kpool.UpdateReplace, "needs a new pool"},
		{kpool.UpdateNotImplemented, "not implemented"},
	} {
		switch {
		case !has[e.class]:
		case e.class == kpool.UpdateReplace && p.Replacement != "":
			effects = append(effects, "replaces the pool ("+p.Replacement+")")
		default:
			effects = append(effects, e.say)
		}
	}
	if len(effects) == 0 {
		effects = []string{"no node replaced"}
	}
	if has[kpool.UpdateAdvisory] {
		effects = append(effects, "some stored but not applied (advisory)")
	}
	return out + ", " + strings.Join(effects, ", ")
}

// jsonValue shows a value as compact JSON, or "-" when absent (or null).
func jsonValue(v any) string {
	if v == nil {
		return "-"
	}
	return jsondoc.Compact(v)
}

func phase(p kpool.Phase, h kpool.Health) string {
	if h == "" {
		return orDash(string(p))
	}
	return fmt.Sprintf("%s (%s)", orDash(string(p)), h)
}

func taint(t kpool.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

func statusView(w io.Writer, d *service.StatusDocument, names *shown, now time.Time) {
	kv := func(k string, v any) { fmt.Fprintf(w, "%s:\t%v\n", k, v) }
	st := &d.Status
	kv("Node pool", names.pool(d.NodePoolID))
	kv("Cluster", names.cluster(d.ClusterID))
	kv("Phase", phase(st.Phase, st.Health))
	kv("Generation", d.Generation)
	kv("Observed generation", st.ObservedGeneration)
	if st.LastReadyGeneration != 0 {
		kv("Last ready generation", st.LastReadyGeneration)
	}
	kv("Message", orDash(st.Message))
	kv("Last update", when(st.LastUpdateTime, now))
	if d.Deleted {
		kv("Deleted", "yes")
	}
	replacementView(w, d.NodePoolID, st.Replacement, now)
	fmt.Fprintln(w)
	conditions(w, "", st.Conditions, now)
	if len(d.ControllerStatus) == 0 {
		fmt.Fprintln(w, "\nNo controller has reported on this node pool yet.")
		return
	}
	for _, r := range d.ControllerStatus {
		fmt.Fprintf(w, "\nController %s:\n", r.ControllerName)
		fmt.Fprintf(w, "  Observed generation:\t%d\n", r.ObservedGeneration)
		fmt.Fprintf(w, "  Updated:\t%s\n", when(r.UpdatedAt, now))
		if m := strings.TrimSpace(string(r.Metadata)); m != "" && m != "{}" && m != "null" {
			var b bytes.Buffer
			if json.Compact(&b, r.Metadata) == nil {
				m = b.String()
			}
			fmt.Fprintf(w, "  Metadata:\t%s\n", m)
		}
		fmt.Fprintln(w)
		conditions(w, "  ", r.Conditions, now)
	}
}

func conditions(w io.Writer, indent string, cs []kpool.Condition, now time.Time) {
	if len(cs) == 0 {
		fmt.Fprintln(w, indent+"No conditions.")
		return
	}
	fmt.Fprintln(w, indent+"TYPE\tSTATUS\tREASON\tMESSAGE\tLAST TRANSITION")
	for _, c := range cs {
		fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\n", indent, c.Type, c.Status, orDash(c.Reason), orDash(oneLine(c.Message)), age(c.LastTransitionTime, now))
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ---- helpers ----

// platformBlock returns the settings in platform's block for type t as a
// JSON object.
func platformBlock(platform any, t kpool.PlatformType) map[string]any {
	b, err := json.Marshal(platform)
	if err != nil {
		return nil
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return nil
	}
	block, _ := m[string(t)].(map[string]any)
	return block
}

// format shows a JSON value: objects as k=v pairs, lists comma-separated.
func format(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+"="+format(x[k]))
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = format(e)
		}
		return strings.Join(parts, ", ")
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case nil:
		return "-"
	}
	return fmt.Sprint(v)
}

func joinMap(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
