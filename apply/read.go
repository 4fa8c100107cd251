package apply

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/internal/jsondoc"
)

// Document is one node pool of an apply file: the API's node pool body,
// with the cluster given by cluster_id or, by name or ID, by cluster.
type Document struct {
	api.NodePoolBody
	Cluster string `json:"cluster,omitempty"`
	// Source is where the file has it, for errors: "document 2", or
	// "document 2[0]" for the first pool of a list.
	Source string `json:"-"`
}

// listKeys are the members of a list's page (kpool nodepool list -o yaml)
// besides its pools: read and left out.
var listKeys = map[string]bool{"nodepools": true, "total": true, "limit": true, "offset": true, "next": true}

// Read returns the node pools of data, a YAML or JSON file: YAML documents
// separated by "---" lines (a comment may follow on the line, as kubectl
// has it), each one pool, a list of pools, or a page of a list as kpool
// nodepool list -o yaml prints it (its pools, under nodepools). Fields the
// server sets (status, generation, created_at…) are read and ignored, so
// that what get and list print can be applied. Documents that are empty or
// hold only comments are skipped. source names data in errors
// ("pools.yaml", "stdin"). Every document at fault is reported in one
// VALIDATION_ERROR whose fields name them ("document 2: spec.nodeCount");
// data with no pool at all is an error too.
func Read(data []byte, source string) ([]Document, error) {
	var docs []Document
	var fe kpool.FieldErrors
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		part, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		where := fmt.Sprintf("document %d", n)
		if err != nil { // the document ends in a separator with more than a comment after it
			fe.Add(where, "not YAML or JSON: %v", err)
			break
		}
		docs = append(docs, decode(part, where, &fe)...)
	}
	if err := fe.Err(); err != nil {
		e := err.(*kpool.Error)
		e.Message = source + ": " + e.Message
		return nil, e
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s has no node pools", source)
	}
	return docs, nil
}

// decode returns the pools of one YAML document: none for an empty one,
// one, or each of a list ("document 2[0]" in errors).
func decode(part []byte, where string, fe *kpool.FieldErrors) []Document {
	js, err := yaml.YAMLToJSON(part)
	if err != nil {
		fe.Add(where, "not YAML or JSON: %v", err)
		return nil
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		return nil // an empty document, or only comments
	}
	items, list, ok := listItems(js, where, fe)
	if !ok {
		return nil
	}
	var docs []Document
	for i, item := range items {
		w := where
		if list {
			w = fmt.Sprintf("%s[%d]", where, i)
		}
		var d Document
		if jsondoc.Decode(item, &d, "", func(field, reason string) { fe.Add(w+": "+field, "%s", reason) }) {
			d.Source = w
			docs = append(docs, d)
		}
	}
	return docs
}

// listItems returns the pools of a document: itself, the items of a JSON
// list, or the nodepools of a list's page; list says it was a list.
func listItems(js []byte, where string, fe *kpool.FieldErrors) (items []json.RawMessage, list, ok bool) {
	if js[0] == '[' {
		if err := json.Unmarshal(js, &items); err != nil {
			fe.Add(where, "%v", err)
			return nil, true, false
		}
		return items, true, true
	}
	var page map[string]json.RawMessage
	if json.Unmarshal(js, &page) != nil || page["nodepools"] == nil {
		return []json.RawMessage{js}, false, true
	}
	bad := false
	for k := range page {
		if !listKeys[k] {
			fe.Add(where+": "+k, "unknown field: a list holds nodepools (and total, limit, offset, next)")
			bad = true
		}
	}
	if bad {
		return nil, true, false
	}
	if err := json.Unmarshal(page["nodepools"], &items); err != nil {
		fe.Add(where+": nodepools", "must be a list of node pools: %v", err)
		return nil, true, false
	}
	return items, true, true
}
