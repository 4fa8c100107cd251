package sim

import (
	"encoding/base64"
	"errors"
	"sort"
	"strconv"
)

// ErrPageToken is Page's error for a token that does not decode.
var ErrPageToken = errors.New("the page token is invalid")

// Page returns the page of a list that follows token ("" for the first
// page): at most size of the items whose keys sort after the key the token
// names, and the token of the next page ("" when this page is the last).
// items must be sorted by their keys, ascending, and the keys unique; the
// page after a key is then right however the list changed in between. The
// token is opaque to clients, as every cloud's is: each emulator only
// puts it where its wire does (ARM's nextLink, EKS's nextToken, OCI's
// opc-next-page).
func Page[T any](items []T, key func(T) string, token string, size int) (page []T, next string, err error) {
	after, err := decodeToken(token)
	if err != nil {
		return nil, "", err
	}
	i := 0
	if token != "" {
		i = sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	}
	end := min(i+max(size, 1), len(items))
	page = items[i:end]
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1])))
	}
	return page, next, nil
}

func decodeToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", ErrPageToken
	}
	return string(b), nil
}

// PageSize reads a page size a client asks for (v, from the query): def
// when it asks for none; false when v is not a whole number from 1 to
// most.
func PageSize(v string, def, most int) (int, bool) {
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, false
	}
	return n, true
}
