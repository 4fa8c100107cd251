package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/util/jsonpath"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/service"
)

// More output formats, as kubectl has them: wide tables, names, a JSONPath
// template; tables without their header; lists sorted by a JSONPath.
const (
	outWide     = "wide"
	outName     = "name"
	outJSONPath = "jsonpath="
)

// checkOutput refuses an -o that is not a format, and a JSONPath, column
// list or template that does not parse.
func checkOutput(o, sortBy string) error {
	_, isColumns, colErr := columnsOf(o)
	_, isTemplate, tmplErr := templateOf(o)
	switch {
	case o == outTable, o == outJSON, o == outYAML, o == outWide, o == outName:
	case strings.HasPrefix(o, outJSONPath):
		if _, err := parsePath(strings.TrimPrefix(o, outJSONPath)); err != nil {
			return fmt.Errorf("--output %s: %v", o, err)
		}
	case isColumns:
		return errors.Join(colErr, checkSortBy(sortBy))
	case isTemplate:
		return errors.Join(tmplErr, checkSortBy(sortBy))
	default:
		return fmt.Errorf("--output %q is not a format: use table, wide, json, yaml, name, jsonpath=TEMPLATE, custom-columns=HEADER:PATH,… (or custom-columns-file=FILE) or go-template=TEMPLATE (or go-template-file=FILE)", o)
	}
	return checkSortBy(sortBy)
}

// checkSortBy refuses a --sort-by that is not a JSONPath.
func checkSortBy(sortBy string) error {
	if sortBy != "" {
		if _, err := parsePath(sortBy); err != nil {
			return fmt.Errorf("--sort-by %s: %v", sortBy, err)
		}
	}
	return nil
}

// parsePath parses a JSONPath template; a bare path (.name) is braced as
// kubectl does, and a key the object lacks prints nothing, as kubectl's
// default --allow-missing-template-keys does (a pool without labels has no
// spec.labels).
func parsePath(t string) (*jsonpath.JSONPath, error) {
	if !strings.Contains(t, "{") {
		t = "{" + t + "}"
	}
	p := jsonpath.New("output").AllowMissingKeys(true)
	if err := p.Parse(t); err != nil {
		return nil, err
	}
	return p, nil
}

// generic is v as JSON decodes into any: what a JSONPath walks.
func generic(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return out, d.Decode(&out)
}

// printPath writes v through a JSONPath template.
func printPath(out io.Writer, v any, tmpl string) error {
	p, err := parsePath(tmpl)
	if err != nil {
		return err
	}
	g, err := generic(v)
	if err != nil {
		return err
	}
	if err := p.Execute(out, g); err != nil {
		return fmt.Errorf("--output jsonpath: %v", err)
	}
	_, err = io.WriteString(out, "\n")
	return err
}

// printNames writes kind/ID for each object of v, which kpool's commands
// take back (kpool nodepool get nodepool/ID).
func printNames(out io.Writer, v any) error {
	var names []string
	switch o := v.(type) {
	case *kpool.Cluster:
		names = []string{"cluster/" + o.ID}
	case clusterWithFacts:
		names = []string{"cluster/" + o.ID}
	case *kpool.LogicalPool:
		names = []string{"logicalpool/" + o.Name}
	case *api.LogicalPoolList:
		for _, lp := range o.LogicalPools {
			names = append(names, "logicalpool/"+lp.Name)
		}
	case *api.ClusterList:
		for _, c := range o.Clusters {
			names = append(names, "cluster/"+c.ID)
		}
	case *kpool.NodePool:
		names = []string{"nodepool/" + o.ID}
	case *api.NodePoolList:
		for _, p := range o.NodePools {
			names = append(names, "nodepool/"+p.ID)
		}
	case *service.StatusDocument:
		names = []string{"nodepool/" + o.NodePoolID}
	case *api.EventList:
		for _, e := range o.Events {
			names = append(names, fmt.Sprintf("event/%d", e.ID))
		}
	case *api.NodeList:
		for _, n := range o.Items {
			names = append(names, "node/"+n.Name) // as kubectl get nodes -o name
		}
	default:
		return fmt.Errorf("-o name shows clusters, node pools, logical pools, nodes and events, not %T", v)
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(out, n); err != nil {
			return err
		}
	}
	return nil
}

// sortItems sorts a list's items by a JSONPath of each item: numbers as
// numbers, anything else as text, items without the field last.
func sortItems(v any, expr string) error {
	switch o := v.(type) {
	case *api.ClusterList:
		return sortBy(o.Clusters, expr)
	case *api.NodePoolList:
		return sortBy(o.NodePools, expr)
	case *api.EventList:
		return sortBy(o.Events, expr)
	case *api.NodeList:
		return sortBy(o.Items, expr)
	case *api.LogicalPoolList:
		return sortBy(o.LogicalPools, expr)
	}
	return nil // one object: nothing to sort
}

func sortBy[T any](items []T, expr string) error {
	p, err := parsePath(expr)
	if err != nil {
		return err
	}
	type keyed struct {
		item  T
		s     string
		n     float64
		isNum bool
		has   bool
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		ks[i].item = it
		g, err := generic(it)
		if err != nil {
			return err
		}
		results, err := p.FindResults(g)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		val := results[0][0].Interface()
		ks[i].has = true
		ks[i].s = fmt.Sprint(val)
		if n, ok := val.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err == nil {
				ks[i].n, ks[i].isNum = f, true
			}
		}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case a.has != b.has:
			if a.has {
				return -1
			}
			return 1
		case a.isNum && b.isNum:
			switch {
			case a.n < b.n:
				return -1
			case a.n > b.n:
				return 1
			}
			return 0
		}
		return strings.Compare(a.s, b.s)
	})
	for i := range ks {
		items[i] = ks[i].item
	}
	return nil
}

// noHeader drops the first line written through it: a table's header.
type noHeader struct {
	w    io.Writer
	done bool
}

func (n *noHeader) Write(b []byte) (int, error) {
	if n.done {
		return n.w.Write(b)
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return len(b), nil
	}
	n.done = true
	if _, err := n.w.Write(b[i+1:]); err != nil {
		return 0, err
	}
	return len(b), nil
}

// table reports whether the output is a table for people (table or wide),
// with its messages such as "No node pools found." on stderr.
func (f *clientFlags) table() bool { return f.output == outTable || f.output == outWide }
