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
}

// Read returns the node pools of data, a YAML or JSON file: YAML documents
// separated by "---" lines (a comment may follow on the line, as kubectl
// has it), each one pool or a list of pools. Documents that are empty or
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
	items := []json.RawMessage{js}
	list := js[0] == '['
	if list {
		if err := json.Unmarshal(js, &items); err != nil {
			fe.Add(where, "%v", err)
			return nil
		}
	}
	var docs []Document
	for i, item := range items {
		w := where
		if list {
			w = fmt.Sprintf("%s[%d]", where, i)
		}
		var d Document
		if jsondoc.Decode(item, &d, "", func(field, reason string) { fe.Add(w+": "+field, "%s", reason) }) {
			docs = append(docs, d)
		}
	}
	return docs
}
