package oke

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/sim"
)

// Cluster add-ons (InstallAddon, GetAddon, ListAddons, UpdateAddon,
// DisableAddon: oci-go-sdk containerengine, paths
// /clusters/{clusterId}/addons[/{addonName}]): each change is a work
// request (ENABLE_ADDON, UPDATE_ADDON, DISABLE_ADDON) during which the
// add-on is CREATING, UPDATING or DELETING and takes no other change
// (409 IncorrectState); GetAddon gives an etag that UpdateAddon's if-match
// must carry when given (412 NoEtagMatch).

// AutoscalerAddon is the name of OKE's Cluster Autoscaler add-on.
const AutoscalerAddon = "ClusterAutoscaler"

// addonNames are the add-ons OKE offers (ListAddonOptions; docs: "Cluster
// Add-on Management"); another name is refused.
var addonNames = map[string]bool{AutoscalerAddon: true, "CertManager": true, "CoreDNS": true, "KubeProxy": true,
	"KubernetesDashboard": true, "NvidiaGpuPlugin": true, "OciVcnIpNative": true, "Istio": true, "KubernetesMetricsServer": true}

// addon is an add-on installed on a cluster.
type addon struct {
	name    string
	version *string
	configs []ce.AddonConfiguration
	state   ce.AddonLifecycleStateEnum
	created time.Time
	rev     int // counts changes: the etag
	op      *sim.Operation
}

func (a *addon) view() ce.Addon {
	return ce.Addon{Name: common.String(a.name), LifecycleState: a.state, Version: a.version, CurrentInstalledVersion: common.String("v1.30.3-1"),
		TimeCreated: &common.SDKTime{Time: a.created}, Configurations: append([]ce.AddonConfiguration{}, a.configs...)}
}

func (a *addon) etag() string {
	sum := sha256.Sum256([]byte(a.name + "/" + strconv.Itoa(a.rev)))
	return hex.EncodeToString(sum[:8])
}

// lookupAddon finds the cluster of the path and, when named, its add-on.
func (s *Server) lookupAddon(req *sim.Request, named bool) (*cluster, *addon, *sim.Reply) {
	c, ok := s.clusters[req.HTTP.PathValue("id")]
	if !ok {
		return nil, nil, notFound("cluster", req.HTTP.PathValue("id"))
	}
	if !named {
		return c, nil, nil
	}
	a, ok := c.addons[req.HTTP.PathValue("name")]
	if !ok {
		return c, nil, notFound("addon", req.HTTP.PathValue("name"))
	}
	return c, a, nil
}

func (s *Server) getAddon(req *sim.Request) *sim.Reply {
	_, a, rep := s.lookupAddon(req, true)
	if rep != nil {
		return rep
	}
	rep = jsonReply(http.StatusOK, a.view())
	rep.Header.Set("etag", a.etag())
	return rep
}

func (s *Server) listAddons(req *sim.Request) *sim.Reply {
	c, _, rep := s.lookupAddon(req, false)
	if rep != nil {
		return rep
	}
	out := []ce.AddonSummary{}
	for _, name := range sortedAddons(c) {
		v := c.addons[name].view()
		out = append(out, ce.AddonSummary{Name: v.Name, LifecycleState: v.LifecycleState, Version: v.Version,
			CurrentInstalledVersion: v.CurrentInstalledVersion, TimeCreated: v.TimeCreated})
	}
	return jsonReply(http.StatusOK, out)
}

func sortedAddons(c *cluster) []string {
	names := make([]string, 0, len(c.addons))
	for n := range c.addons {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// installAddon answers InstallAddon: an add-on already installed is
// refused unless isOverrideExisting.
func (s *Server) installAddon(req *sim.Request) *sim.Reply {
	c, _, rep := s.lookupAddon(req, false)
	if rep != nil {
		return rep
	}
	var in ce.InstallAddonDetails
	if rep := decodeStrict(req.Body, &in); rep != nil {
		return rep
	}
	name := ptr.Deref(in.AddonName, "")
	switch {
	case name == "":
		return missing("addonName")
	case !addonNames[name]:
		return invalid("Invalid addonName %s: not an add-on OKE offers (ListAddonOptions).", name)
	}
	if rep := checkAddonConfig(name, in.Configurations); rep != nil {
		return rep
	}
	a := c.addons[name]
	switch {
	case a != nil && a.op != nil:
		return addonBusy(a)
	case a != nil && !ptr.Deref(in.IsOverrideExisting, false):
		return failf(http.StatusConflict, "NotAuthorizedOrResourceAlreadyExists", "Addon %s is already installed on cluster %s.", name, c.ID)
	case a == nil:
		a = &addon{name: name, created: req.Now}
		c.addons[name] = a
	}
	a.version, a.configs = in.Version, append([]ce.AddonConfiguration{}, in.Configurations...)
	return s.beginAddon(req, c, a, string(ce.WorkRequestOperationTypeEnableAddon), ce.AddonLifecycleStateCreating)
}

// updateAddon answers UpdateAddon: the configurations given replace the
// add-on's (the model gives the whole list; kpool's driver always sends
// it whole, so a merge would behave the same for it).
func (s *Server) updateAddon(req *sim.Request) *sim.Reply {
	c, a, rep := s.lookupAddon(req, true)
	if rep != nil {
		return rep
	}
	var in ce.UpdateAddonDetails
	if rep := decodeStrict(req.Body, &in); rep != nil {
		return rep
	}
	if m := req.HTTP.Header.Get("if-match"); m != "" && m != a.etag() {
		return failf(http.StatusPreconditionFailed, errPreconditionFailed, "The if-match etag %s does not match the add-on's current etag.", m)
	}
	if a.op != nil {
		return addonBusy(a)
	}
	if in.Configurations != nil {
		if rep := checkAddonConfig(a.name, in.Configurations); rep != nil {
			return rep
		}
		a.configs = append([]ce.AddonConfiguration{}, in.Configurations...)
	}
	if in.Version != nil {
		a.version = in.Version
	}
	return s.beginAddon(req, c, a, string(ce.WorkRequestOperationTypeUpdateAddon), ce.AddonLifecycleStateUpdating)
}

// disableAddon answers DisableAddon; isRemoveExistingAddOn is required
// (the model's query parameter), the if-match etag checked when given.
func (s *Server) disableAddon(req *sim.Request) *sim.Reply {
	c, a, rep := s.lookupAddon(req, true)
	if rep != nil {
		return rep
	}
	if _, err := strconv.ParseBool(req.HTTP.URL.Query().Get("isRemoveExistingAddOn")); err != nil {
		return missing("isRemoveExistingAddOn")
	}
	if m := req.HTTP.Header.Get("if-match"); m != "" && m != a.etag() {
		return failf(http.StatusPreconditionFailed, errPreconditionFailed, "The if-match etag %s does not match the add-on's current etag.", m)
	}
	if a.op != nil {
		return addonBusy(a)
	}
	return s.beginAddon(req, c, a, string(ce.WorkRequestOperationTypeDisableAddon), ce.AddonLifecycleStateDeleting)
}

func addonBusy(a *addon) *sim.Reply {
	return failf(http.StatusConflict, errIncorrectState, "Addon %s is in state %s: another work request is in progress on it.", a.name, a.state)
}

// beginAddon starts the work request of an add-on change: the add-on is
// in state while it runs, ACTIVE after (or gone, for a disable).
func (s *Server) beginAddon(req *sim.Request, c *cluster, a *addon, typ string, state ce.AddonLifecycleStateEnum) *sim.Reply {
	o := req.Start(string(state), 0, 0, 0)
	s.seq++
	w := &work{id: ocid("clustersworkrequest", c.Region, o.ID), typ: typ, compartment: c.CompartmentID, cluster: c.ID, addon: a.name,
		accepted: req.Now, seq: s.seq, op: o}
	w.log(req.Now, "Addon %s %s accepted.", a.name, w.verb())
	s.works[w.id] = w
	s.forget()
	a.state, a.op, a.rev = state, o, a.rev+1
	o.Data = w
	o.Done = func(o *sim.Operation) {
		a.op, a.rev = nil, a.rev+1
		switch {
		case o.Fails:
			a.state = ce.AddonLifecycleStateNeedsAttention
			w.fail(o.End, "InternalError", fmt.Sprintf("The add-on %s could not be %sd.%s", a.name, w.verb(), injected))
			return
		case state == ce.AddonLifecycleStateDeleting:
			delete(c.addons, a.name)
		default:
			a.state = ce.AddonLifecycleStateActive
		}
		w.log(o.End, "Addon %s %s succeeded.", a.name, w.verb())
	}
	rep := sim.NewReply(http.StatusAccepted)
	rep.Header.Set("opc-work-request-id", w.id)
	return rep
}
