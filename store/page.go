package store

import (
	"strings"

	"github.com/kpool/kpool"
)

// Pages: every list is in (created_at, id) order, and a page is a range of
// one index, whatever else the table holds.

// where builds a WHERE clause from conditions joined by AND.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// clone is a copy of w that conditions can be added to apart.
func (w where) clone() where {
	return where{conds: append([]string(nil), w.conds...), args: append([]any(nil), w.args...)}
}

// key is a column (unqualified) a list's filter fixes to one value: a
// leading column of the index, (key…, created_at, id), its pages are
// ranges of.
type key struct {
	col string
	val any
}

// with is w and each key's column of table equal to its value.
func (w where) with(table string, keys []key) where {
	all := w.clone()
	for _, k := range keys {
		all.add(table+"."+k.col+" = ?", k.val)
	}
	return all
}

// page returns the WHERE, ORDER BY, LIMIT and OFFSET of a page of rows that
// hold w and whose keys have their values. The cursor is a row value, so
// that it is a range of the index rather than a filter over the rows before
// it: a page costs the same at any depth.
//
// The keys are written as a range of the whole index key, the ORDER BY
// naming them, rather than as equalities: PostgreSQL drops a column an
// equality fixes from the ORDER BY, and then weighs the (created_at, id)
// index against (key, created_at, id) as if the key's rows were spread
// evenly over time; for a big cluster among older rows it walked the global
// index past every older row. Only the (key…, created_at, id) index gives
// this order, so both databases read the page as one range of it.
func (db *DB) page(w where, p kpool.Page, table string, keys []key) (string, []any) {
	all := w.clone()
	var cols []string
	var vals []any
	for _, k := range keys {
		cols, vals = append(cols, table+"."+k.col), append(vals, k.val)
	}
	order := append(cols, table+".created_at", table+".id")
	switch {
	case p.After != nil:
		all.add(row(order)+" > "+marks(len(order)), append(vals, db.d.Time(p.After.CreatedAt), p.After.ID)...)
	case len(keys) > 0:
		all.add(row(cols)+" >= "+marks(len(cols)), vals...)
	}
	if len(keys) > 0 {
		all.add(row(cols)+" <= "+marks(len(cols)), vals...)
	}
	tail := all.String() + " ORDER BY " + strings.Join(order, ", ") + " LIMIT ? OFFSET ?"
	return tail, append(all.args, p.Limit, p.Offset)
}

// row is a row value of cols: (a, b), or (a) for one column, which the
// databases take as the column itself.
func row(cols []string) string { return "(" + strings.Join(cols, ", ") + ")" }

// marks is a row value of n placeholders.
func marks(n int) string { return "(?" + strings.Repeat(", ?", n-1) + ")" }
