package kube

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// Version is what /version answers: the Kubernetes version the clusters
// claim to run.
var Version = version.Info{Major: "1", Minor: "33", GitVersion: "v1.33.0", Platform: "linux/amd64"}

// groupVersions are the API groups served, as /apis lists them.
var groupVersions = []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}, {GroupVersion: "policy/v1", Version: "v1"}}

// discovery answers the discovery documents (legacy, unaggregated JSON:
// the kinds metav1 defines for them), returning false for another path.
func discovery(w http.ResponseWriter, parts []string) bool {
	p := ""
	for i, s := range parts {
		if i > 0 {
			p += "/"
		}
		p += s
	}
	switch p {
	case "version":
		writeJSON(w, http.StatusOK, &Version)
	case "api":
		writeJSON(w, http.StatusOK, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "127.0.0.1"}}})
	case "apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for _, gv := range groupVersions {
			g, _, _ := cut(gv.GroupVersion)
			list.Groups = append(list.Groups, metav1.APIGroup{Name: g, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
		}
		writeJSON(w, http.StatusOK, &list)
	case "api/v1":
		writeJSON(w, http.StatusOK, resourceList("v1", ""))
	case "apis/apps/v1":
		writeJSON(w, http.StatusOK, resourceList("apps/v1", "apps"))
	case "apis/policy/v1":
		writeJSON(w, http.StatusOK, resourceList("policy/v1", "policy"))
	case "apis/apps", "apis/policy":
		g := parts[1]
		gv := metav1.GroupVersionForDiscovery{GroupVersion: g + "/v1", Version: "v1"}
		writeJSON(w, http.StatusOK, &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g,
			Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	default:
		return false
	}
	return true
}

func cut(gv string) (string, string, bool) {
	for i := range gv {
		if gv[i] == '/' {
			return gv[:i], gv[i+1:], true
		}
	}
	return "", gv, false
}

// resourceList is a group version's APIResourceList: each resource of the
// group with its verbs and short names, the pods' eviction subresource
// (create) and the deployments' scale subresource (get, patch, update).
func resourceList(gv, group string) *metav1.APIResourceList {
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, r := range resources {
		if r.gr.Group != group {
			continue
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: r.gr.Resource, SingularName: singular(r), Namespaced: r.namespaced,
			Kind: r.gvk.Kind, Verbs: r.verbs, ShortNames: r.short, Categories: r.categories})
		if r == podRes {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: "pods/eviction", SingularName: "", Namespaced: true,
				Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}})
		}
		if r == depRes {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: "deployments/scale", SingularName: "", Namespaced: true,
				Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}})
		}
	}
	return l
}

func singular(r *resource) string {
	n := r.gr.Resource
	return n[:len(n)-1]
}
