package kpool

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func page(o ListOptions) (Page, error) {
	p := Page{Limit: o.Limit, Offset: o.Offset}
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	var fe FieldErrors
	if p.Limit < 1 || p.Limit > MaxLimit {
		fe.Add("limit", "must be between 1 and %d, got %d", MaxLimit, o.Limit)
	}
	if p.Offset < 0 {
		fe.Add("offset", "must not be negative, got %d", o.Offset)
	}
	if o.After != "" {
		c, err := DecodeCursor(o.After)
		if err != nil {
			fe.Add("after", "%v", err)
		}
		p.After = c
		if p.Offset != 0 {
			fe.Add("offset", "cannot be combined with after: page with one or the other")
		}
	}
	return p, fe.Err()
}

// pageOf makes a page of at most limit items from rows that may hold one
// more; that extra row says a next page exists.
func pageOf[T any](rows []T, total, limit int, pos func(T) Cursor) *List[T] {
	l := &List[T]{Items: rows, Total: total, Limit: limit}
	if len(rows) > limit {
		l.Items = rows[:limit]
		l.Next = EncodeCursor(pos(l.Items[limit-1]))
	}
	return l
}

// EncodeCursor turns a position into the opaque string of a list's next.
func EncodeCursor(c Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID))
}

// DecodeCursor parses a string made by EncodeCursor.
func DecodeCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cursor from a previous page's next", s)
	}
	ts, id, ok := strings.Cut(string(b), ".")
	us, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || !IsUUID(id) {
		return nil, fmt.Errorf("%q is not a cursor from a previous page's next", s)
	}
	return &Cursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}
