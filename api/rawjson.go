package api

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kpool/kpool"
)

// appendPool appends the pool's JSON, exactly as json.Marshal would write
// it, with the spec and status copied as stored: a read answers without
// reflection or re-validating JSON that kpool wrote itself.
func appendPool(b []byte, r *kpool.RawNodePool) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, r.Name)
	b = append(b, `,"cluster_id":`...)
	b = appendString(b, r.ClusterID)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, r.Generation, 10)
	b = append(b, `,"resource_version":`...)
	b = appendString(b, r.ResourceVersion)
	b = append(b, `,"spec":`...)
	b = appendRaw(b, r.Spec)
	b = append(b, `,"status":`...)
	b = appendRaw(b, r.Status)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, r.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, r.UpdatedAt)
	b = append(b, `,"created_by":`...)
	b = appendString(b, r.CreatedBy)
	if r.DeletionTimestamp != nil {
		b = append(b, `,"deletion_timestamp":`...)
		b = appendTime(b, *r.DeletionTimestamp)
	}
	if r.ProviderName != "" {
		b = append(b, `,"provider_name":`...)
		b = appendString(b, r.ProviderName)
	}
	return append(b, '}')
}

func appendRaw(b, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendString appends s as a JSON string, escaped as encoding/json escapes
// it (HTML characters, U+2028 and U+2029 included; invalid UTF-8 as U+FFFD).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
