package kpool

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
