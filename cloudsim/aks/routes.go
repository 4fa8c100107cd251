package aks

import (
	"net/http"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
)

// request is an ARM request with what its route needs.
type request struct {
	*sim.Request
	version string            // api-version
	base    string            // https://host
	vars    map[string]string // the path's variables, by the names of its route
}

// handler answers one of ARM's routes.
type handler func(*Server, *request) *sim.Reply

// armRoute is one of ARM's paths the emulator serves, in segments, and
// its handlers by method ("" takes any other method).
type armRoute struct {
	path    []string
	methods map[string]handler
}

// The paths of a managed cluster and of a subscription's location.
const (
	clusterPath  = "subscriptions/{subscription}/resourceGroups/{resourceGroup}/providers/Microsoft.ContainerService/managedClusters/{cluster}"
	locationPath = "subscriptions/{subscription}/providers/Microsoft.ContainerService/locations/{location}"
	// skusPath is Compute's Resource SKUs list (armcompute.ResourceSKUsClient).
	skusPath = "subscriptions/{subscription}/providers/Microsoft.Compute/skus"
)

// armRoutes are the routes, the first that matches a path wins. ARM paths
// are case-insensitive, which http.ServeMux's patterns cannot say: hence
// a table of its own.
var armRoutes = []armRoute{
	route(clusterPath, map[string]handler{http.MethodGet: (*Server).getCluster,
		http.MethodPut: writeCluster, http.MethodPatch: writeCluster, http.MethodDelete: writeCluster, http.MethodPost: writeCluster}),
	route(clusterPath+"/agentPools", map[string]handler{http.MethodGet: (*Server).listPools}),
	route(clusterPath+"/agentPools/{pool}", map[string]handler{
		http.MethodGet: (*Server).getPool, http.MethodPut: (*Server).putPool, http.MethodDelete: (*Server).deletePool}),
	route(clusterPath+"/agentPools/{pool}/abort", map[string]handler{http.MethodPost: (*Server).abort}),
	route(clusterPath+"/agentPools/{pool}/upgradeNodeImageVersion", map[string]handler{http.MethodPost: (*Server).upgradeNodeImage}),
	route(clusterPath+"/agentPools/{pool}/deleteMachines", map[string]handler{http.MethodPost: (*Server).deleteMachines}),
	route(clusterPath+"/agentPools/{pool}/machines", map[string]handler{http.MethodGet: (*Server).listMachines}),
	route(clusterPath+"/agentPools/{pool}/machines/{machine}", map[string]handler{http.MethodGet: (*Server).getMachine}),
	route(clusterPath+"/agentPools/{pool}/upgradeProfiles/default", map[string]handler{http.MethodGet: (*Server).upgradeProfile}),
	route(clusterPath+"/availableAgentPoolVersions", map[string]handler{http.MethodGet: (*Server).availablePoolVersions}),
	route(clusterPath+"/listClusterUserCredential", map[string]handler{http.MethodPost: func(s *Server, r *request) *sim.Reply { return s.credentials(r, false) }}),
	route(clusterPath+"/listClusterAdminCredential", map[string]handler{http.MethodPost: func(s *Server, r *request) *sim.Reply { return s.credentials(r, true) }}),
	route(clusterPath+"/agentPools/{pool}/{rest...}", map[string]handler{"": func(_ *Server, r *request) *sim.Reply {
		return notImplemented("agentPools/" + r.vars["rest"])
	}}),
	route(clusterPath+"/{rest...}", map[string]handler{"": func(_ *Server, r *request) *sim.Reply {
		return notImplemented("managedClusters/" + r.vars["rest"])
	}}),
	route(skusPath, map[string]handler{http.MethodGet: (*Server).listSKUs}),
	route(locationPath+"/operations/{id}", map[string]handler{http.MethodGet: (*Server).operationStatus}),
	route(locationPath+"/operationresults/{id}", map[string]handler{http.MethodGet: (*Server).operationResult}),
}

func route(path string, methods map[string]handler) armRoute {
	return armRoute{path: strings.Split(path, "/"), methods: methods}
}

func writeCluster(*Server, *request) *sim.Reply { return notImplemented("writing managed clusters") }

// match matches a path, in segments, against the route: a fixed segment
// without case, as ARM compares them; {name} any one segment; {name...}
// one or more. It returns the variables.
func (rt armRoute) match(seg []string) (map[string]string, bool) {
	vars := map[string]string{}
	for i, p := range rt.path {
		if i >= len(seg) {
			return nil, false
		}
		name, isVar := strings.CutPrefix(p, "{")
		name = strings.TrimSuffix(name, "}")
		switch rest, many := strings.CutSuffix(name, "..."); {
		case isVar && many:
			vars[rest] = strings.Join(seg[i:], "/")
			return vars, true
		case isVar:
			vars[name] = seg[i]
		case !strings.EqualFold(p, seg[i]):
			return nil, false
		}
	}
	return vars, len(seg) == len(rt.path)
}

// route answers a request with the handler of its route and method.
func (s *Server) route(req *sim.Request) *sim.Reply {
	seg := strings.Split(strings.Trim(req.HTTP.URL.Path, "/"), "/")
	for _, rt := range armRoutes {
		vars, ok := rt.match(seg)
		if !ok {
			continue
		}
		req.SetOperation(req.HTTP.Method + " /" + strings.Join(rt.path, "/"))
		h, ok := rt.methods[req.HTTP.Method]
		if !ok {
			h, ok = rt.methods[""]
		}
		if !ok {
			return methodNotAllowed(req.HTTP.Method)
		}
		return h(s, &request{Request: req, version: req.HTTP.URL.Query().Get("api-version"), base: req.BaseURL(), vars: vars})
	}
	return errorReply(http.StatusNotFound, "InvalidResourceType",
		"The resource path '%s' is not one the kpool cloudsim AKS emulator serves.", req.HTTP.URL.Path)
}

// cluster finds the cluster of the path, answering ARM's 404s; parent is
// true on the agent-pool paths.
func (s *Server) cluster(req *request, parent bool) (*cluster, *sim.Reply) {
	return s.lookup(req.vars["subscription"], req.vars["resourceGroup"], req.vars["cluster"], parent)
}
