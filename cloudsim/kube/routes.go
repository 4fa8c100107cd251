package kube

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ServeHTTP answers a request under the API's prefix:
// <prefix>/<cluster>/<the API server's path>, after checking the cluster's
// bearer token (the API server answers an unknown or missing one 401
// before it looks at the path).
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, a.prefix+"/")
	if !ok {
		writeStatus(w, notFound())
		return
	}
	id, rest, _ := strings.Cut(rest, "/")
	a.mu.Lock()
	c, known := a.clusters[id]
	refresh := a.refresh
	a.mu.Unlock()
	if !known || !c.allowed(r) {
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	if refresh != nil {
		refresh(id)
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if r.Method == http.MethodGet && discovery(w, parts) {
		return
	}
	switch {
	case len(parts) >= 2 && parts[0] == "api" && parts[1] == "v1":
		a.route(w, r, c, "", parts[2:])
	case len(parts) >= 3 && parts[0] == "apis" && parts[1] == "policy" && parts[2] == "v1":
		a.route(w, r, c, "policy", parts[3:])
	case len(parts) >= 3 && parts[0] == "apis" && parts[1] == "apps" && parts[2] == "v1":
		a.route(w, r, c, "apps", parts[3:])
	default:
		writeStatus(w, notFound())
	}
}

// route finds the resource of a group's path
// ([namespaces/<ns>/]<resource>[/<name>[/<subresource>]]) and serves it.
func (a *API) route(w http.ResponseWriter, r *http.Request, c *cluster, group string, p []string) {
	ns := ""
	if len(p) >= 3 && p[0] == "namespaces" {
		ns, p = p[1], p[2:]
	}
	var res *resource
	for _, x := range resources {
		if len(p) > 0 && x.gr.Group == group && x.gr.Resource == p[0] {
			res = x
		}
	}
	if res == nil || len(p) > 3 || (ns != "" && !res.namespaced) {
		writeStatus(w, notFound())
		return
	}
	name, sub := "", ""
	if len(p) > 1 {
		name = p[1]
	}
	if len(p) > 2 {
		sub = p[2]
	}
	if name != "" && res.namespaced && ns == "" {
		// A namespaced object is only reached through its namespace.
		writeStatus(w, notFound())
		return
	}
	a.serveObj(w, r, c, res, ns, name, sub)
}
