package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"text/template"

	"k8s.io/client-go/util/jsonpath"

	"github.com/kpool/kpool/api"
)

// kubectl's -o custom-columns and -o go-template, with their -file forms.
const (
	outColumns      = "custom-columns="
	outColumnsFile  = "custom-columns-file="
	outTemplate     = "go-template="
	outTemplateFile = "go-template-file="
)

// column is one column of -o custom-columns: its header and the JSONPath
// of its value in each item.
type column struct {
	header string
	path   *jsonpath.JSONPath
}

// columnsOf reads the columns of o (custom-columns=SPEC or
// custom-columns-file=FILE); ok is false when o is neither.
func columnsOf(o string) (cols []column, ok bool, err error) {
	switch {
	case strings.HasPrefix(o, outColumns):
		cols, err = parseColumns(strings.TrimPrefix(o, outColumns))
	case strings.HasPrefix(o, outColumnsFile):
		cols, err = columnsFile(strings.TrimPrefix(o, outColumnsFile))
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("--output (-o) %s: %v", o, err)
	}
	return cols, true, nil
}

// parseColumns reads kubectl's custom-columns spec: HEADER:PATH pairs,
// comma-separated, such as NAME:.name,NODES:.spec.nodeCount.
func parseColumns(spec string) ([]column, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("no columns: give HEADER:PATH pairs, comma-separated, such as NAME:.name,NODES:.spec.nodeCount")
	}
	var cols []column
	for i, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || strings.TrimSpace(header) == "" || strings.TrimSpace(path) == "" {
			return nil, fmt.Errorf("column %d %q is not HEADER:PATH (such as NAME:.name)", i+1, part)
		}
		c, err := newColumn(header, path)
		if err != nil {
			return nil, fmt.Errorf("column %d (%s): %v", i+1, header, err)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// columnsFile reads kubectl's custom-columns file: a line of headers and a
// line of paths, both separated by spaces.
func columnsFile(name string) ([]column, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var lines [][]string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, f)
		}
	}
	if len(lines) != 2 || len(lines[0]) != len(lines[1]) {
		return nil, errors.New("the file must have two lines, the headers and as many paths (such as \"NAME NODES\" then \".name .spec.nodeCount\")")
	}
	cols := make([]column, len(lines[0]))
	for i, h := range lines[0] {
		if cols[i], err = newColumn(h, lines[1][i]); err != nil {
			return nil, fmt.Errorf("column %d (%s): %v", i+1, h, err)
		}
	}
	return cols, nil
}

// newColumn parses a column's path as kubectl does: .name, name and
// {.name} are the same.
func newColumn(header, path string) (column, error) {
	path = strings.TrimSpace(path)
	if !strings.HasPrefix(path, "{") && !strings.HasPrefix(path, ".") {
		path = "." + path
	}
	p, err := parsePath(path)
	if err != nil {
		return column{}, err
	}
	p.AllowMissingKeys(true)
	return column{header: strings.TrimSpace(header), path: p}, nil
}

// printColumns writes a row for each item of v (v itself when it is not a
// list): each column's values, comma-separated, or <none>.
func printColumns(out io.Writer, v any, cols []column, noHeaders bool) error {
	items, err := listItems(v)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	if !noHeaders {
		hs := make([]string, len(cols))
		for i, c := range cols {
			hs[i] = c.header
		}
		fmt.Fprintln(tw, strings.Join(hs, "\t"))
	}
	for _, it := range items {
		cells := make([]string, len(cols))
		for i, c := range cols {
			results, err := c.path.FindResults(it)
			if err != nil {
				return fmt.Errorf("--output (-o) custom-columns: column %s: %v", c.header, err)
			}
			var vals []string
			for _, r := range results {
				for _, x := range r {
					vals = append(vals, cell(x.Interface()))
				}
			}
			cells[i] = "<none>"
			if len(vals) > 0 {
				cells[i] = strings.Join(vals, ",")
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell shows a value in a column: text and numbers as they are, objects
// and lists as compact JSON.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	case json.Number:
		return string(x)
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// listItems is v as JSON decodes it: the items of a list, or v alone.
func listItems(v any) ([]any, error) {
	key := ""
	switch v.(type) {
	case *api.NodePoolList:
		key = "nodepools"
	case *api.ClusterList:
		key = "clusters"
	case *api.LogicalPoolList:
		key = "logicalpools"
	case *api.EventList:
		key = "events"
	case *api.NodeList:
		key = "items"
	}
	g, err := generic(v)
	if err != nil || key == "" {
		return []any{g}, err
	}
	m, _ := g.(map[string]any)
	items, _ := m[key].([]any)
	return items, nil
}

// templateOf parses the template of o (go-template=TEMPLATE or
// go-template-file=FILE); ok is false when o is neither.
func templateOf(o string) (t *template.Template, ok bool, err error) {
	var text string
	switch {
	case strings.HasPrefix(o, outTemplate):
		text = strings.TrimPrefix(o, outTemplate)
	case strings.HasPrefix(o, outTemplateFile):
		b, err := os.ReadFile(strings.TrimPrefix(o, outTemplateFile))
		if err != nil {
			return nil, true, fmt.Errorf("--output (-o) %s: %v", o, err)
		}
		text = string(b)
	default:
		return nil, false, nil
	}
	if strings.TrimSpace(text) == "" {
		return nil, true, fmt.Errorf("--output (-o) %s: the template is empty (such as go-template='{{.name}}')", o)
	}
	if t, err = template.New("output").Parse(text); err != nil {
		return nil, true, fmt.Errorf("--output (-o) %s: %v", o, err)
	}
	return t, true, nil
}

// printTemplate runs t over v as JSON decodes it (a list as the list's
// JSON), numbers as int64 or float64 so that eq and lt compare them.
func printTemplate(out io.Writer, v any, t *template.Template) error {
	g, err := generic(v)
	if err != nil {
		return err
	}
	if err := t.Execute(out, numbers(g)); err != nil {
		return fmt.Errorf("--output (-o) go-template: %v", err)
	}
	return nil
}

// numbers turns the json.Numbers in v into int64 (or float64 when not
// whole), as kubectl's templates see them.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}
