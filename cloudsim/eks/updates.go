package eks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
	"k8s.io/utils/ptr"
)

// updateConfigRequest is UpdateNodegroupConfigRequest.
type updateConfigRequest struct {
	Labels             *labelsUpdate   `json:"labels"`
	Taints             *taintsUpdate   `json:"taints"`
	ScalingConfig      *scalingConfig  `json:"scalingConfig"`
	UpdateConfig       *updateConfig   `json:"updateConfig"`
	NodeRepairConfig   json.RawMessage `json:"nodeRepairConfig"`
	ClientRequestToken *string         `json:"clientRequestToken"`
}

// labelsUpdate is an UpdateNodegroupConfig's labels: what to add or
// change, and what to remove.
type labelsUpdate struct {
	AddOrUpdateLabels map[string]string `json:"addOrUpdateLabels"`
	RemoveLabels      []string          `json:"removeLabels"`
}

// taintsUpdate is an UpdateNodegroupConfig's taints: what to add or
// change, and what to remove.
type taintsUpdate struct {
	AddOrUpdateTaints []taint `json:"addOrUpdateTaints"`
	RemoveTaints      []taint `json:"removeTaints"`
}

// updatable refuses an update of a node group that is busy or broken.
func updatable(c *cluster, g *nodegroup) *sim.Reply {
	if g.op != nil {
		return busy(c, g, "updated")
	}
	if st := g.ng.Status; st != statusActive && st != statusDegraded {
		return fail(errInvalidRequest, apiError{Message: fmt.Sprintf("Nodegroup %s cannot be updated in status %s; only ACTIVE or DEGRADED node groups can be.", g.name, st),
			ClusterName: c.name, NodegroupName: g.name})
	}
	return nil
}

func (s *Server) updateConfig(req *call) *sim.Reply {
	c := req.cluster
	g, rep := req.nodegroup()
	if rep != nil {
		return rep
	}
	var in updateConfigRequest
	if rep := decode(req, &in); rep != nil {
		return rep
	}
	if rep := updatable(c, g); rep != nil {
		return rep
	}
	next, params, rep := validateConfig(c, g, &in)
	if rep != nil {
		return rep
	}
	from := len(g.instances) // what it has, short or not
	g.ng = next
	g.ng.ModifiedAt = epoch(req.Now)
	o := req.Start(statusUpdating, from, int(*next.ScalingConfig.DesiredSize), 0)
	u := &update{id: o.ID, typ: typeConfig, nodegroup: g.name, params: params, created: req.Now, op: o}
	c.updates[u.id] = u
	g.updates = append(g.updates, u.id)
	s.begin(o, g, u)
	g.reserve(o.To - from)
	return jsonReply(map[string]any{"update": u.view()})
}

// updateVersionRequest is UpdateNodegroupVersionRequest.
type updateVersionRequest struct {
	Version            *string `json:"version"`
	ReleaseVersion     *string `json:"releaseVersion"`
	LaunchTemplate     *ltSpec `json:"launchTemplate"`
	Force              bool    `json:"force"`
	ClientRequestToken *string `json:"clientRequestToken"`
}

func (s *Server) updateVersion(req *call) *sim.Reply {
	c := req.cluster
	g, rep := req.nodegroup()
	if rep != nil {
		return rep
	}
	var in updateVersionRequest
	if len(strings.TrimSpace(string(req.Body))) > 0 {
		if rep := decode(req, &in); rep != nil {
			return rep
		}
	}
	if rep := updatable(c, g); rep != nil {
		return rep
	}
	params, rep := s.validateVersion(c, g, &in)
	if rep != nil {
		return rep
	}
	// Every node is replaced: one new node up and one old node drained each.
	n := len(g.instances)
	o := req.Start(statusUpdating, n, n, 2*n)
	if in.Force {
		// A failed version update is pods that could not be drained
		// (PodEvictionFailure, finish); force terminates their nodes
		// anyway ("Force the update if any Pod on the existing node group
		// can't be drained due to a Pod disruption budget issue":
		// UpdateNodegroupVersion, EKS API Reference).
		o.Fails = false
	}
	u := &update{id: o.ID, typ: typeVersion, nodegroup: g.name, params: params, created: req.Now, op: o}
	c.updates[u.id] = u
	g.updates = append(g.updates, u.id)
	s.begin(o, g, u)
	return jsonReply(map[string]any{"update": u.view()})
}

func (s *Server) describeUpdate(req *call) *sim.Reply {
	c, id := req.cluster, req.HTTP.PathValue("id")
	u, ok := c.updates[id]
	ngName := req.HTTP.URL.Query().Get("nodegroupName")
	if !ok || (ngName != "" && ngName != u.nodegroup) {
		return fail(errNotFound, apiError{Message: "No update found for ID: " + id + ".", ClusterName: c.name, NodegroupName: ngName})
	}
	return jsonReply(map[string]any{"update": u.view()})
}

// listUpdates lists a node group's updates, newest last (nodegroupName
// given), or none: the cluster's own updates are not emulated.
func (s *Server) listUpdates(req *call) *sim.Reply {
	c, q := req.cluster, req.HTTP.URL.Query()
	out := struct {
		UpdateIDs []string `json:"updateIds"`
	}{UpdateIDs: []string{}}
	if n := q.Get("nodegroupName"); n != "" {
		g, ok := c.nodegroups[n]
		if !ok {
			return ngNotFound(c, n)
		}
		out.UpdateIDs = append(out.UpdateIDs, g.updates...)
	}
	return jsonReply(out)
}

// validateConfig checks an UpdateNodegroupConfig request against the node
// group and returns the node group it makes and the update's params.
func validateConfig(c *cluster, g *nodegroup, in *updateConfigRequest) (Nodegroup, []updateParam, *sim.Reply) {
	u := &configUpdate{c: c, name: g.name, next: g.view()}
	u.next.Status = g.ng.Status
	for _, apply := range []func() *sim.Reply{
		func() *sim.Reply { return u.scaling(in.ScalingConfig) },
		func() *sim.Reply { return u.labels(in.Labels) },
		func() *sim.Reply { return u.taints(in.Taints) },
		func() *sim.Reply { return u.updateConfig(in.UpdateConfig) },
	} {
		if rep := apply(); rep != nil {
			return u.next, nil, rep
		}
	}
	if len(u.params) == 0 {
		return u.next, nil, invalid(c, g.name, "No changes needed: the request updates nothing.")
	}
	return u.next, u.params, nil
}

// configUpdate is an UpdateNodegroupConfig being applied to node group
// name of cluster c: the node group it makes, and the update's params in
// the order EKS lists them.
type configUpdate struct {
	c      *cluster
	name   string
	next   Nodegroup
	params []updateParam
}

func (u *configUpdate) add(typ string, n int32) {
	u.params = append(u.params, updateParam{Type: typ, Value: strconv.Itoa(int(n))})
}

// addList adds a param of a list or map v, in JSON, when it has n > 0
// entries.
func (u *configUpdate) addList(typ string, n int, v any) {
	if n > 0 {
		u.params = append(u.params, updateParam{Type: typ, Value: jsonString(v)})
	}
}

func (u *configUpdate) scaling(sc *scalingConfig) *sim.Reply {
	if sc == nil {
		return nil
	}
	merged := u.next.ScalingConfig
	if sc.MinSize != nil {
		merged.MinSize = sc.MinSize
		u.add("MinSize", *sc.MinSize)
	}
	if sc.MaxSize != nil {
		merged.MaxSize = sc.MaxSize
		u.add("MaxSize", *sc.MaxSize)
	}
	if sc.DesiredSize != nil {
		merged.DesiredSize = sc.DesiredSize
		u.add("DesiredSize", *sc.DesiredSize)
	}
	if rep := checkScaling(u.c, u.name, merged); rep != nil {
		return rep
	}
	u.next.ScalingConfig = merged
	return nil
}

func (u *configUpdate) labels(l *labelsUpdate) *sim.Reply {
	if l == nil {
		return nil
	}
	for _, k := range l.RemoveLabels {
		if _, both := l.AddOrUpdateLabels[k]; both {
			return invalid(u.c, u.name, "labels: key %s is in both addOrUpdateLabels and removeLabels.", k)
		}
		if _, ok := u.next.Labels[k]; !ok {
			return invalid(u.c, u.name, "labels: cannot remove label %s: the node group has no such label.", k)
		}
		delete(u.next.Labels, k)
	}
	maps.Copy(u.next.Labels, l.AddOrUpdateLabels)
	if rep := checkLabels(u.c, u.name, u.next.Labels); rep != nil {
		return rep
	}
	u.addList("LabelsToAdd", len(l.AddOrUpdateLabels), l.AddOrUpdateLabels)
	u.addList("LabelsToRemove", len(l.RemoveLabels), l.RemoveLabels)
	return nil
}

func (u *configUpdate) taints(t *taintsUpdate) *sim.Reply {
	if t == nil {
		return nil
	}
	if rep := applyTaints(u.c, u.name, &u.next, t); rep != nil {
		return rep
	}
	u.addList("TaintsToAdd", len(t.AddOrUpdateTaints), t.AddOrUpdateTaints)
	u.addList("TaintsToRemove", len(t.RemoveTaints), t.RemoveTaints)
	return nil
}

func (u *configUpdate) updateConfig(uc *updateConfig) *sim.Reply {
	if uc == nil {
		return nil
	}
	if rep := checkUpdateConfig(u.c, u.name, uc); rep != nil {
		return rep
	}
	u.next.UpdateConfig = *uc
	if uc.MaxUnavailable != nil {
		u.add("MaxUnavailable", *uc.MaxUnavailable)
	} else {
		u.add("MaxUnavailablePercentage", *uc.MaxUnavailablePercentage)
	}
	return nil
}

// applyTaints applies an update's taints to the node group it makes:
// none both added and removed, none removed that it lacks, all valid.
func applyTaints(c *cluster, name string, next *Nodegroup, t *taintsUpdate) *sim.Reply {
	id := func(x taint) string { return ptr.Deref(x.Key, "") + ":" + x.Effect }
	adding := map[string]bool{}
	for _, a := range t.AddOrUpdateTaints {
		if rep := checkTaint(c, name, a); rep != nil {
			return rep
		}
		adding[id(a)] = true
	}
	for _, r := range t.RemoveTaints {
		if adding[id(r)] {
			return invalid(c, name, "taints: taint %s is in both addOrUpdateTaints and removeTaints.", id(r))
		}
		i := slices.IndexFunc(next.Taints, func(x taint) bool { return id(x) == id(r) })
		if i < 0 {
			return invalid(c, name, "taints: cannot remove taint %s: the node group has no such taint.", id(r))
		}
		next.Taints = slices.Delete(next.Taints, i, i+1)
	}
	for _, a := range t.AddOrUpdateTaints {
		if i := slices.IndexFunc(next.Taints, func(x taint) bool { return id(x) == id(a) }); i >= 0 {
			next.Taints[i] = a
		} else {
			next.Taints = append(next.Taints, a)
		}
	}
	return checkTaints(c, name, next.Taints)
}

// validateVersion checks an UpdateNodegroupVersion request and returns
// the update's params. No version and no release version is the
// cluster's version at its latest AMI, unless a launch template is given:
// then only the template's version changes.
func (s *Server) validateVersion(c *cluster, g *nodegroup, in *updateVersionRequest) ([]updateParam, *sim.Reply) {
	ltVersion := ""
	if in.LaunchTemplate.given() {
		v, rep := s.versionTemplate(c, g, in.LaunchTemplate)
		if rep != nil {
			return nil, rep
		}
		ltVersion = v
	}
	version, release, rep := targetVersion(c, g, in)
	if rep != nil {
		return nil, rep
	}
	sameTemplate := ltVersion == "" || (g.ng.LaunchTemplate != nil && ltVersion == ptr.Deref(g.ng.LaunchTemplate.Version, ""))
	if version == g.ng.Version && release == g.ng.ReleaseVersion && sameTemplate {
		return nil, invalid(c, g.name, "Nodegroup %s is already at version %s (release %s).", g.name, version, release)
	}
	params := []updateParam{{Type: "Version", Value: version}, {Type: "ReleaseVersion", Value: release}}
	if ltVersion != "" {
		params = append(params, updateParam{Type: "LaunchTemplateName", Value: ptr.Deref(g.ng.LaunchTemplate.Name, "")},
			updateParam{Type: "LaunchTemplateVersion", Value: ltVersion})
	}
	return params, nil
}

// targetVersion is the Kubernetes and AMI release version an
// UpdateNodegroupVersion asks for: never older than the node group's
// (UpdateNodegroupVersion updates "to the latest available AMI version"
// or a given newer one; EKS has no rollback of a node group's version or
// AMI release: the user guide, update-managed-node-group.html).
func targetVersion(c *cluster, g *nodegroup, in *updateVersionRequest) (version, release string, rep *sim.Reply) {
	version = g.ng.Version
	switch {
	case in.Version != nil:
		if rep := checkVersion(c, g.name, *in.Version); rep != nil {
			return "", "", rep
		}
		if compareVersions(*in.Version, g.ng.Version) < 0 {
			return "", "", invalid(c, g.name, "Requested Nodegroup version %s is older than its current version %s: node groups cannot be downgraded.", *in.Version, g.ng.Version)
		}
		version = *in.Version
	case in.ReleaseVersion == nil && in.LaunchTemplate.given():
		return g.ng.Version, g.ng.ReleaseVersion, nil
	case in.ReleaseVersion == nil:
		version = c.version // no version: the cluster's, with its latest AMI
	}
	release = version + ".0-20260101"
	if in.ReleaseVersion != nil {
		if !releaseVersionRE.MatchString(*in.ReleaseVersion) || !strings.HasPrefix(*in.ReleaseVersion, version+".") {
			return "", "", invalid(c, g.name, "Requested release version %s is not valid for kubernetes version %s.", *in.ReleaseVersion, version)
		}
		release = *in.ReleaseVersion
	}
	if compareReleases(release, g.ng.ReleaseVersion) < 0 {
		return "", "", invalid(c, g.name, "Requested release version %s is older than the node group's release version %s: an AMI release cannot be rolled back.", release, g.ng.ReleaseVersion)
	}
	return version, release, nil
}

// compareVersions orders major.minor versions by number.
func compareVersions(a, b string) int {
	return slices.Compare(numbers(a), numbers(b))
}

// compareReleases orders AMI release versions (1.31.2-20250101) by their
// version numbers, then their date.
func compareReleases(a, b string) int {
	va, da, _ := strings.Cut(a, "-")
	vb, db, _ := strings.Cut(b, "-")
	if n := slices.Compare(numbers(va), numbers(vb)); n != 0 {
		return n
	}
	return strings.Compare(da, db)
}

func numbers(v string) []int {
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}
