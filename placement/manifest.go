package placement

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// MaxManifestBytes bounds the input, as the API bounds a body.
const MaxManifestBytes = 8 << 20

// document is one YAML or JSON document of the input.
type document struct {
	n    int            // its position, from 1
	text string         // as it came
	obj  map[string]any // decoded; nil for a document of comments only
}

// split cuts the input into its documents and decodes each, keeping
// numbers as written (json.Number) so that nothing is rounded.
func split(data []byte) ([]*document, error) {
	if len(data) > MaxManifestBytes {
		return nil, kpool.Invalid("manifests", "%d bytes: the limit is %d", len(data), MaxManifestBytes)
	}
	noDocs := kpool.Invalid("manifests", "no documents: give Kubernetes manifests in YAML or JSON")
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, noDocs
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []*document
	var fe kpool.FieldErrors
	for n := 1; ; n++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, kpool.Invalid("manifests", "reading document %d: %v", n, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			n--
			continue
		}
		d := &document{n: n, text: string(raw)}
		if !strings.HasSuffix(d.text, "\n") {
			d.text += "\n"
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			fe.Add(fmt.Sprintf("document %d", n), "not YAML or JSON: %v", err)
			continue
		}
		if t := bytes.TrimSpace(js); string(t) == "null" {
			docs = append(docs, d) // comments only
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			fe.Add(fmt.Sprintf("document %d", n), "not YAML or JSON: %v", err)
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			fe.Add(fmt.Sprintf("document %d", n), "is a %s, not a Kubernetes object", typeName(v))
			continue
		}
		d.obj = obj
		docs = append(docs, d)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if len(docs) == 0 { // only separators ("---"), found by FuzzPlace
		return nil, noDocs
	}
	return docs, nil
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
