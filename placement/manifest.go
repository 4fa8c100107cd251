package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// MaxManifestBytes bounds the input, as the API bounds a body.
const MaxManifestBytes = 8 << 20

// document is one YAML or JSON document of the input.
type document struct {
	n int // its position, from 1
	// lead is what came before it as it came: its "---" line (with any
	// comment on it) and any empty documents before that.
	lead string
	text string         // as it came
	obj  map[string]any // decoded; nil for a document of comments only
	crlf bool           // its lines end in CRLF
}

// chunk is a document of the input with the lines before it.
type chunk struct{ lead, text string }

// cut cuts the input at its "---" lines (a comment may follow on the
// line; anything else is an error, as kubectl has it), keeping every byte:
// each chunk's lead is the separator before it and the empty documents
// before that; trailing separators end up in tail.
func cut(data []byte) (chunks []chunk, tail string, err error) {
	var lead, text strings.Builder
	n := 0
	flush := func() {
		if strings.TrimSpace(text.String()) == "" {
			lead.WriteString(text.String())
		} else {
			chunks = append(chunks, chunk{lead.String(), text.String()})
			lead.Reset()
		}
		text.Reset()
	}
	for rest := string(data); rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		n++
		if after, ok := strings.CutPrefix(line, "---"); ok {
			if t := strings.TrimSpace(after); t == "" || strings.HasPrefix(t, "#") || after == "" {
				flush()
				lead.WriteString(line)
				continue
			} else if after[0] == ' ' || after[0] == '\t' {
				return nil, "", fmt.Errorf("line %d: only a comment may follow a document separator (---), not %q", n, t)
			}
		}
		text.WriteString(line)
	}
	flush()
	return chunks, lead.String(), nil
}

// MaxDocuments bounds the documents of one input: a placement's work and
// memory grow with them (a megabyte of one-line documents is sixteen
// thousand of them), and an app's manifests are far fewer.
const MaxDocuments = 1000

// split cuts the input into its documents, undecoded (see decode): each is
// decoded as it is placed, so that only one is held decoded at a time.
func split(data []byte) ([]chunk, string, error) {
	if len(data) > MaxManifestBytes {
		return nil, "", kpool.Invalid("manifests", "%d bytes: the limit is %d", len(data), MaxManifestBytes)
	}
	noDocs := kpool.Invalid("manifests", "no documents: give Kubernetes manifests in YAML or JSON")
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "", noDocs
	}
	chunks, tail, err := cut(data)
	switch {
	case err != nil:
		return nil, "", kpool.Invalid("manifests", "%v", err)
	case len(chunks) == 0: // only separators ("---"), found by FuzzPlace
		return nil, "", noDocs
	case len(chunks) > MaxDocuments:
		return nil, "", kpool.Invalid("manifests", "%d documents: at most %d in one placement; place them in parts", len(chunks), MaxDocuments)
	}
	return chunks, tail, nil
}

// decode decodes the n-th document, keeping numbers as written
// (json.Number) so that nothing is rounded; what is wrong with it goes to
// fe.
func decode(n int, c chunk, fe *kpool.FieldErrors) (*document, bool) {
	d := &document{n: n, lead: c.lead, text: c.text, crlf: strings.Contains(c.text, "\r\n")}
	js, err := yaml.YAMLToJSON([]byte(c.text))
	if err != nil {
		fe.Add(fmt.Sprintf("document %d", n), "not YAML or JSON: %v", err)
		return nil, false
	}
	if t := bytes.TrimSpace(js); string(t) == "null" {
		return d, true // comments only
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		fe.Add(fmt.Sprintf("document %d", n), "not YAML or JSON: %v", err)
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		fe.Add(fmt.Sprintf("document %d", n), "is a %s, not a Kubernetes object", typeName(v))
		return nil, false
	}
	d.obj = obj
	return d, true
}

func typeName(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// workload says where a kind keeps its pod spec and its replica count.
type workload struct {
	podSpec  []string
	replicas []string // nil: no count to check (a DaemonSet runs one per node)
}

// workloads are the kinds placed, by API group and kind.
var workloads = map[string]workload{
	"apps/Deployment":  {[]string{"spec", "template", "spec"}, []string{"spec", "replicas"}},
	"apps/StatefulSet": {[]string{"spec", "template", "spec"}, []string{"spec", "replicas"}},
	"apps/ReplicaSet":  {[]string{"spec", "template", "spec"}, []string{"spec", "replicas"}},
	"apps/DaemonSet":   {[]string{"spec", "template", "spec"}, nil},
	"batch/Job":        {[]string{"spec", "template", "spec"}, []string{"spec", "parallelism"}},
	"batch/CronJob":    {[]string{"spec", "jobTemplate", "spec", "template", "spec"}, []string{"spec", "jobTemplate", "spec", "parallelism"}},
	"/Pod":             {[]string{"spec"}, []string{}},
}

// kindOf returns an object's "group/Kind" and its name for messages
// ("Deployment shop/web").
func kindOf(obj map[string]any) (gk, name string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group := ""
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		group = g
	}
	meta, _ := obj["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		n = ns + "/" + n
	}
	if n == "" {
		n = "(no name)"
	}
	return group + "/" + kind, kind + " " + n
}

// place places the workloads in a document and returns its text: the
// document as it came when nothing changed.
func (d *document) place(o Options, fe *kpool.FieldErrors, res *Result) (string, error) {
	if d.obj == nil {
		return d.text, nil
	}
	changed := false
	if kind, _ := d.obj["kind"].(string); kind == "List" || strings.HasSuffix(kind, "List") && d.obj["items"] != nil {
		items, _ := d.obj["items"].([]any)
		for i, it := range items {
			obj, ok := it.(map[string]any)
			if !ok {
				continue
			}
			if placeObject(o, fe, res, d.n, fmt.Sprintf("items[%d].", i), obj) {
				changed = true
			}
		}
	} else {
		changed = placeObject(o, fe, res, d.n, "", d.obj)
	}
	if !changed {
		return d.text, nil
	}
	b, err := yaml.Marshal(d.obj)
	if err != nil {
		return "", fmt.Errorf("document %d: %w", d.n, err)
	}
	if d.crlf {
		return strings.ReplaceAll(string(b), "\n", "\r\n"), nil
	}
	return string(b), nil
}

// path returns the map at path in obj, creating the maps on the way when
// create is set; ok is false when something on the way is not a map.
func path(obj map[string]any, p []string, create bool) (m map[string]any, ok bool) {
	m = obj
	for _, k := range p {
		next, exists := m[k]
		if !exists || next == nil {
			if !create {
				return nil, true
			}
			nm := map[string]any{}
			m[k] = nm
			m = nm
			continue
		}
		if m, ok = next.(map[string]any); !ok {
			return nil, false
		}
	}
	return m, true
}

// replicas reads a workload's replica count (1 when unset).
func replicas(obj map[string]any, p []string) (int, bool) {
	if len(p) == 0 {
		return 1, true // a Pod
	}
	parent, ok := path(obj, p[:len(p)-1], false)
	if !ok {
		return 0, false
	}
	n, has := parent[p[len(p)-1]].(json.Number)
	if !has {
		return 1, true
	}
	v, err := n.Int64()
	if err != nil {
		return 0, false
	}
	return int(v), true
}
