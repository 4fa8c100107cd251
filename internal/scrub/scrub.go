// Package scrub hides secrets in text bound for a log: kpool API tokens,
// JWTs (OpenID Connect ID tokens, cloud access tokens), the credentials of
// an Authorization header, a URL's userinfo password, and the values of
// password=, secret=, token= pairs. kpool never logs a secret on purpose;
// this is the net under what it logs by accident, such as a token a
// caller put in a URL's query or an error that quotes a request.
package scrub

import (
	"log/slog"
	"regexp"
	"strings"
)

// Hidden replaces what is scrubbed.
const Hidden = "xxxxx"

// tokenPrefix is kpool.TokenPrefix (a test checks that they agree; the
// package imports nothing of kpool's).
const tokenPrefix = "kpool_"

var (
	// apiToken is a kpool token (43 characters of base64url after the
	// prefix), or a long enough piece of one.
	apiToken = regexp.MustCompile(tokenPrefix + `[A-Za-z0-9_-]{24,}`)
	// jwt is a JSON Web Token: base64url header (always starting {" ,
	// eyJ), payload and signature.
	jwt = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// authScheme is an Authorization header's credentials.
	authScheme = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}`)
	// userinfo is a URL's user:password@.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]*:)[^@/\s]+@`)
	// pair is key=value or "key":"value" where the key names a secret. A
	// quoted value may be escaped (\"…\", a quoted error quoting a
	// header) or cut short (a reason cut at its length, its closing quote
	// lost): then all the rest is hidden.
	pair = regexp.MustCompile(`(?i)("?\b[a-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|signature|credential)"?)(\s*=\s*|"?\s*:\s*")(\\?"[^"]*(?:"|$)|'[^']*(?:'|$)|[^\s&"',;)]+)`)
)

// String returns s with every secret it recognises replaced.
func String(s string) string {
	if strings.Contains(s, tokenPrefix) {
		s = apiToken.ReplaceAllStringFunc(s, func(m string) string {
			// Names such as kpool's metrics (kpool_provider_calls_total)
			// or a schema (kpool_test_3f9a…) are lower case; 24 random
			// characters of a token have an upper-case letter or a '-'
			// but once in 2^19.
			if strings.IndexFunc(m[len(tokenPrefix):], func(r rune) bool { return r >= 'A' && r <= 'Z' || r == '-' }) < 0 {
				return m
			}
			return tokenPrefix + Hidden
		})
	}
	if strings.Contains(s, "eyJ") {
		s = jwt.ReplaceAllString(s, Hidden)
	}
	if containsFold(s, "bearer") || containsFold(s, "basic") {
		s = authScheme.ReplaceAllString(s, "${1}${2}"+Hidden)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}"+Hidden+"@")
	}
	if strings.ContainsAny(s, "=:") {
		s = pair.ReplaceAllString(s, "${1}${2}"+Hidden)
	}
	return s
}

// containsFold reports whether s contains word (lowercase ASCII) in any
// case, without allocating.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// secretKey reports whether an attribute's key says its value is a secret.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "password") || strings.Contains(k, "secret") || strings.Contains(k, "authorization") ||
		strings.HasSuffix(k, "token") || k == "cookie" || k == "set-cookie"
}

// Attr is a slog.HandlerOptions.ReplaceAttr that scrubs every string the
// log would write: the message, string values, errors and Stringers; an
// attribute whose key names a secret (password, token, authorization…) is
// hidden whole.
func Attr(_ []string, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if secretKey(a.Key) && v.Kind() != slog.KindGroup {
		return slog.String(a.Key, Hidden)
	}
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); String(s) != s {
			return slog.String(a.Key, String(s))
		}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case interface{ String() string }:
			s = x.String()
		case []byte:
			s = string(x)
		default:
			return a
		}
		if c := String(s); c != s {
			return slog.String(a.Key, c)
		}
	}
	return a
}
