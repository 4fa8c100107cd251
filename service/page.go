package service

import "github.com/kpool/kpool"

func page(o ListOptions) (kpool.Page, error) {
	p := kpool.Page{Limit: o.Limit, Offset: o.Offset}
	if p.Limit == 0 {
		p.Limit = kpool.DefaultLimit
	}
	var fe kpool.FieldErrors
	if p.Limit < 1 || p.Limit > kpool.MaxLimit {
		fe.Add("limit", "must be between 1 and %d, got %d", kpool.MaxLimit, o.Limit)
	}
	if p.Offset < 0 {
		fe.Add("offset", "must not be negative, got %d", o.Offset)
	}
	if p.Offset > kpool.MaxOffset {
		fe.Add("offset", "must be at most %d, got %d: page deeper with After, the Next cursor of the page before", kpool.MaxOffset, o.Offset)
	}
	if n := len(o.Labels); n > kpool.MaxLabels {
		fe.Add("label_selector", "at most %d terms, got %d", kpool.MaxLabels, n)
	}
	if o.After != "" {
		c, err := kpool.DecodeCursor(o.After)
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
func pageOf[T any](rows []T, total, limit int, pos func(T) kpool.Cursor) *List[T] {
	l := &List[T]{Items: rows, Total: total, Limit: limit}
	if len(rows) > limit {
		l.Items = rows[:limit]
		l.Next = kpool.EncodeCursor(pos(l.Items[limit-1]))
	}
	return l
}

// ListOptions selects and pages a list.
type ListOptions struct {
	Limit     int    // 1-100; 0 means 50
	Offset    int    // 0-kpool.MaxOffset; deeper pages by After
	After     string // a cursor from a previous List's Next
	ClusterID string
	// Name selects the objects of exactly this name (a pool's name is
	// unique in its cluster, a cluster's in its owner's).
	Name   string
	Phase  kpool.Phase
	Health kpool.Health
	// Labels selects the pools whose spec.labels it matches (kubectl's -l).
	Labels kpool.Selector
}

// List is one page of a list.
type List[T any] struct {
	Items []T
	Total int
	Limit int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}
