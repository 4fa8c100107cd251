package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Columns: how values are stored and scanned back, alike on every dialect.

// timeCol scans a time stored either as a native timestamp or as text.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		*c.t = x.UTC()
	case string:
		return c.parse(x)
	case []byte:
		return c.parse(string(x))
	default:
		return fmt.Errorf("cannot scan %T into a time", v)
	}
	return nil
}

func (c timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*c.t = t.UTC()
	return nil
}

// nullTimeCol scans a nullable time into a *time.Time.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) Scan(v any) error {
	if v == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(v); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

// jsonCol scans a JSON column into a Go value.
type jsonCol struct{ v any }

func (c jsonCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(x), c.v)
	case []byte:
		return json.Unmarshal(x, c.v)
	}
	return fmt.Errorf("cannot scan %T as JSON", v)
}

// rawCol scans a JSON column's text as it is.
type rawCol struct{ v *json.RawMessage }

// ScanBytes takes the column's bytes as the driver has them (pgx calls it in
// preference to Scan), saving the copy into a driver value that Scan costs.
func (c rawCol) ScanBytes(b []byte) error {
	if b == nil {
		*c.v = nil
	} else {
		*c.v = append(json.RawMessage(nil), b...)
	}
	return nil
}

func (c rawCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.v = nil
	case string:
		*c.v = json.RawMessage(x)
	case []byte:
		*c.v = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("cannot scan %T as JSON", v)
	}
	return nil
}

func (db *DB) nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return db.d.Time(*t)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // kpool's own types always marshal
	}
	return string(b)
}
