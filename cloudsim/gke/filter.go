package gke

import (
	"regexp"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// The list filters the emulator's Compute lists take, on the groups'
// name, as compute-api.json describes `filter` (compute):
//
//   - "If you want to use a regular expression, use the `eq` (equal) or
//     `ne` (not equal) operator against a single un-parenthesized
//     expression with or without quotes or against multiple parenthesized
//     expressions": `name eq literal`, `name eq 'literal'`,
//     `name eq "literal"`, `(name eq a) (name ne "b")`, each taken (AND).
//   - "The literal value is interpreted as a regular expression using
//     GoogleRE2 library syntax. The literal value must match the entire
//     field": a literal that is no RE2 expression is refused (as
//     `name eq *collector*` was, prometheus/prometheus#5499).
//   - AIP-160's comparisons `name = literal` and `name != literal` ("you
//     can exclude instances named `example-instance` by specifying
//     `name != example-instance`"), quoted or not, exactly.
//   - "These two types of filter expressions cannot be mixed in one
//     request": refused.
//
// Anything else (other fields, `>`/`<`/`:`, AND/OR, wildcards in AIP-160
// values) the emulator does not take: it refuses it with Compute's 400
// for a filter ("Invalid list filter expression.") rather than ignore it.

// regexExpr and cmpExpr are one expression of each kind.
var (
	regexExpr = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s+(eq|ne)\s+(.*?)\s*$`)
	cmpExpr   = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(!=|=)\s*(.*?)\s*$`)
)

// parseFilter reads a filter into a test of a group's name; "" takes all.
func parseFilter(f string) (func(name string) bool, *sim.Reply) {
	refuse := computeInvalid("filter", f, "Invalid list filter expression.")
	if strings.TrimSpace(f) == "" {
		return func(string) bool { return true }, nil
	}
	exprs := []string{f}
	if strings.HasPrefix(strings.TrimSpace(f), "(") {
		var ok bool
		if exprs, ok = parenthesized(f); !ok {
			return nil, refuse
		}
	}
	var tests []func(string) bool
	kinds := map[bool]bool{}
	for _, e := range exprs {
		test, regex, ok := expression(e)
		if !ok {
			return nil, refuse
		}
		kinds[regex] = true
		tests = append(tests, test)
	}
	if len(kinds) > 1 {
		return nil, refuse
	}
	return func(name string) bool {
		for _, t := range tests {
			if !t(name) {
				return false
			}
		}
		return true
	}, nil
}

// expression reads one expression on name: a regular expression's
// (regex true) or an AIP-160 comparison's.
func expression(e string) (test func(string) bool, regex, ok bool) {
	if m := regexExpr.FindStringSubmatch(e); m != nil && m[1] == "name" {
		re, err := regexp.Compile(`^(?:` + unquote(m[3]) + `)$`)
		if err != nil || m[3] == "" {
			return nil, true, false
		}
		neg := m[2] == "ne"
		return func(n string) bool { return re.MatchString(n) != neg }, true, true
	}
	if m := cmpExpr.FindStringSubmatch(e); m != nil && m[1] == "name" {
		v := unquote(m[3])
		if v == "" || strings.ContainsAny(v, "*()\"' ") {
			return nil, false, false
		}
		neg := m[2] == "!="
		return func(n string) bool { return (n == v) != neg }, false, true
	}
	return nil, false, false
}

// unquote takes the quotes off a 'single' or "double" quoted literal.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// parenthesized splits "(a) (b)" into its expressions; false when the
// filter is not only parenthesized expressions (an AND or OR between
// them, a parenthesis unclosed), which the emulator does not take.
func parenthesized(f string) ([]string, bool) {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(f); i++ {
		ch := f[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case ch == ')':
			depth--
			if depth < 0 {
				return nil, false
			}
			if depth == 0 {
				out = append(out, f[start:i])
			}
		case depth == 0 && ch != ' ' && ch != '\t' && ch != '\n':
			return nil, false
		}
	}
	return out, depth == 0 && quote == 0 && len(out) > 0
}
