package api

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
)

// query checks that r's query decodes and has only the allowed parameters,
// each once, and that the path's {id}, if any, is an id: a UUID in either
// case, which it puts back in lower case so that the handler finds the
// object. Every fault is in the one error.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	var fe kpool.FieldErrors
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		// What did decode is still checked below.
		fe.Add("query", "the query string does not decode: %v; escape '%%' as %%25 and give parameters as name=value separated by '&'", err)
	}
	if raw := r.PathValue("id"); raw != "" {
		id, err := kpool.RefID("id", raw)
		if err != nil {
			addFields(&fe, err)
		} else {
			r.SetPathValue("id", id)
		}
	}
	for _, k := range sortedKeys(q) {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		switch {
		case !ok && len(allowed) == 0:
			fe.Add(k, "unknown query parameter: this endpoint takes none")
		case !ok:
			fe.Add(k, "unknown query parameter: use %s", strings.Join(allowed, ", "))
		case len(q[k]) > 1:
			fe.Add(k, "given %d times: give it once", len(q[k]))
		}
	}
	return q, fe.Err()
}

// lowerID is v in lower case when that makes it a UUID (ids are stored so),
// otherwise v as it is, for the check that follows to quote.
func lowerID(v string) string {
	if l := strings.ToLower(v); kpool.IsUUID(l) {
		return l
	}
	return v
}

// addFields adds a VALIDATION_ERROR's fields to fe.
func addFields(fe *kpool.FieldErrors, err error) {
	var e *kpool.Error
	if errors.As(err, &e) && e.Code == kpool.CodeValidation {
		*fe = append(*fe, e.Fields...)
	}
}

// sortedKeys returns q's parameter names in order: faults are reported
// in a stable order.
func sortedKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// offsetCap is the message of an offset beyond kpool.MaxOffset.
const offsetCap = "must be at most %d, got %d: an offset costs the rows it skips; page deeper with after=<next>, the next cursor of the page before, which costs the same at any depth"

// listOptions reads a list's paging and filter parameters, every fault in
// the one error.
func listOptions(q url.Values) (service.ListOptions, error) {
	var o service.ListOptions
	var fe kpool.FieldErrors
	if v := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > kpool.MaxLimit {
			fe.Add("limit", "must be an integer between 1 and %d, got %q", kpool.MaxLimit, v)
		}
		o.Limit = n
	}
	if v := q.Get("offset"); q.Has("offset") {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 0:
			fe.Add("offset", "must be an integer of 0 or more, got %q", v)
		case n > kpool.MaxOffset:
			fe.Add("offset", offsetCap, kpool.MaxOffset, n)
		}
		o.Offset = n
	}
	o.After = q.Get("after")
	if q.Has("after") && o.After == "" {
		fe.Add("after", "must be the next cursor of a previous page")
	}
	if v := q.Get("status"); q.Has("status") {
		for _, p := range kpool.Phases {
			if strings.EqualFold(v, string(p)) {
				o.Phase = p
			}
		}
		if o.Phase == "" {
			fe.Add("status", "unknown phase %q: use one of %s", v, join(kpool.Phases))
		}
	}
	if v := q.Get("health"); q.Has("health") {
		for _, h := range kpool.Healths {
			if strings.EqualFold(v, string(h)) {
				o.Health = h
			}
		}
		if o.Health == "" {
			fe.Add("health", "unknown health %q: use one of %s", v, join(kpool.Healths))
		}
	}
	if q.Has("name") {
		o.Name = q.Get("name")
		if o.Name == "" {
			fe.Add("name", "give the name to look for")
		}
	}
	if q.Has("label_selector") {
		sel, err := kpool.ParseSelector("label_selector", q.Get("label_selector"))
		addFields(&fe, err)
		o.Labels = sel
	}
	for _, k := range []string{"cluster_id", "clusterId"} {
		if !q.Has(k) {
			continue
		}
		v, err := kpool.RefID(k, q.Get(k))
		switch {
		case err != nil:
			addFields(&fe, err)
		case o.ClusterID != "" && o.ClusterID != v:
			fe.Add(k, "disagrees with the other cluster id given")
		}
		o.ClusterID = v
	}
	return o, fe.Err()
}

// join lists vs, comma-separated, for a message.
func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// boolParam reads a true or false query parameter, false when absent.
func boolParam(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	b, err := strconv.ParseBool(q.Get(name))
	if err != nil {
		return false, kpool.Invalid(name, "must be true or false, got %q", q.Get(name))
	}
	return b, nil
}
