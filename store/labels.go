package store

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// Label selectors in SQL: each requirement tests the value of one key of a
// labels object (a pool's spec.labels, a logical pool's
// spec.template.labels), which Dialect.LabelValue reads with the key as a
// bound parameter, so that no key or value is ever part of the SQL text.

// SQLiteLabelValue is the SQL of the value of the label whose key is the
// query parameter in the labels object at path (constants of the code, such
// as "spec", "labels") of the JSON column doc, NULL when there is no such
// label. It reads the object with json_each rather than a JSON path, which
// would have to quote keys with dots and slashes.
func SQLiteLabelValue(doc string, path ...string) string {
	return `(SELECT value FROM json_each(` + doc + `, '$.` + strings.Join(path, ".") + `') WHERE key = ?)`
}

// PostgresLabelValue is SQLiteLabelValue for PostgreSQL's json (or jsonb).
func PostgresLabelValue(doc string, path ...string) string {
	return `(` + doc + ` -> '` + strings.Join(path, `' -> '`) + `' ->> ?::text)`
}

// addLabels adds a condition for each requirement of sel on the labels
// object at path in the JSON column doc to w: = and in hold when the label
// has one of the values; != and notin when it has none of them or is
// absent, as in Kubernetes.
func (db *DB) addLabels(w *where, sel kpool.Selector, doc string, path ...string) error {
	if len(sel) > 0 && db.d.LabelValue == nil {
		return fmt.Errorf("store: this database cannot select by labels (no Dialect.LabelValue)")
	}
	for _, r := range sel {
		v := db.d.LabelValue(doc, path...)
		in := "?" + strings.Repeat(", ?", max(len(r.Values)-1, 0))
		args := []any{r.Key}
		for _, val := range r.Values {
			args = append(args, val)
		}
		switch {
		case (r.Op == kpool.OpEquals || r.Op == kpool.OpIn) && len(r.Values) > 0:
			w.add(v+" IN ("+in+")", args...)
		case r.Op == kpool.OpEquals || r.Op == kpool.OpIn:
			w.add("1 = 0") // no value to be equal to
		case (r.Op == kpool.OpNotEquals || r.Op == kpool.OpNotIn) && len(r.Values) > 0:
			w.add("("+v+" IS NULL OR "+v+" NOT IN ("+in+"))", append([]any{r.Key}, args...)...)
		case r.Op == kpool.OpNotEquals || r.Op == kpool.OpNotIn:
			// Nothing to differ from: every pool holds.
		case r.Op == kpool.OpExists:
			w.add(v+" IS NOT NULL", r.Key)
		case r.Op == kpool.OpDoesNotExist:
			w.add(v+" IS NULL", r.Key)
		default:
			return kpool.Invalid("labels", "operator %q is not supported on pool labels", r.Op)
		}
	}
	return nil
}
