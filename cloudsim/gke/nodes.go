package gke

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	container "google.golang.org/api/container/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kpool/kpool/cloudsim/kube"
)

// PoolLabel is the label GKE puts on every node with its node pool's name.
const PoolLabel = "cloud.google.com/gke-nodepool"

// instance is one Compute Engine instance of a pool's instance group in a
// zone, made from one of the pool's instance templates: a node of the
// cluster.
type instance struct {
	zone, name string
	tmpl       tmpl
}

// tmpl is an instance template of a pool: the upgrade that made it (""
// for the pool's first) and the node version its instances run. An
// upgrade (a new version, machine type, disk or image) makes a new one and
// replaces every instance of an older one.
type tmpl struct{ id, version string }

// syncNodes hands the cluster's Kubernetes API the nodes of each of its
// pools at now (kube.SyncNodes), for the pools whose nodes changed since
// the last sync, and no nodes for the pools that are gone. The engine's
// lock is held.
func (s *Server) syncNodes(c *cluster, now time.Time) {
	if c.synced == nil {
		c.synced = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(c.pools)) {
		p := c.pools[name]
		key := p.nodesKey(now)
		if last, ok := c.synced[name]; ok && last == key {
			continue
		}
		s.kube.SyncNodes(c.uid, PoolLabel, name, p.nodeSpecs(now), kube.Propagate)
		c.synced[name] = key
	}
	for _, name := range slices.Sorted(maps.Keys(c.synced)) {
		if _, ok := c.pools[name]; !ok {
			s.kube.SyncNodes(c.uid, PoolLabel, name, nil, kube.Propagate)
			delete(c.synced, name)
		}
	}
}

// nodesKey is what the pool's nodes at now follow from: its node count,
// its upgrade's progress, its operation and its configuration (a new
// etag). The same key, the same nodes: syncNodes skips the pool.
func (p *pool) nodesKey(now time.Time) string {
	t, replaced := p.progress(now)
	op := ""
	if p.op != nil {
		op = p.op.ID
	}
	return fmt.Sprintf("%d %s %s %d %s %s %s %v %v", p.readyAt(now), t.id, t.version, replaced, op, p.etag, p.cluster.project, p.removed, p.held)
}

// progress is the template the pool's nodes are to be made from at now,
// and, while an upgrade replaces them, how many it has replaced (-1 when
// none runs).
func (p *pool) progress(now time.Time) (t tmpl, replaced int) {
	if p.op == nil || infoOf(p.op).opType != opUpgrade {
		return tmpl{p.template, p.np.Version}, -1
	}
	in := infoOf(p.op)
	if span := p.op.End.Sub(p.op.Start); span > 0 {
		replaced = int(int64(in.replace) * int64(max(now.Sub(p.op.Start), 0)) / int64(span))
	}
	return tmpl{p.op.ID, in.version}, replaced
}

// refresh brings the pools up to the clock before a request to a
// cluster's Kubernetes API (kube.API.SetRefresh): the cloud's work goes on
// between calls to its API.
func (s *Server) refresh(string) { s.Do(s.heal) }

// nodeSpecs are the pool's nodes at now: its instances, spread over its
// zones as its instance groups hold them (the count a zone's group has
// now), each made from its template, and the one being made, NotReady.
func (p *pool) nodeSpecs(now time.Time) []kube.NodeSpec {
	n := p.readyAt(now)
	t, replaced := p.progress(now)
	if p.insts == nil {
		p.insts = map[string][]*instance{}
	}
	zones := p.np.Locations
	if len(zones) == 0 {
		return nil
	}
	for z := range p.insts {
		if !slices.Contains(zones, z) {
			delete(p.insts, z)
		}
	}
	for z := range p.removed {
		if !slices.Contains(zones, z) {
			delete(p.removed, z)
		}
	}
	p.spread(n, t)
	if replaced < 0 {
		replaced = n // no upgrade runs: every node is of the pool's template
	}
	old := p.replace(t, replaced)
	p.making = p.nextMade(n, t, old)
	return p.specs()
}

// spread makes the pool's groups hold n instances in all, one at a time:
// a new one (of template t) in the zone furthest below its target size,
// the first on a tie; or the newest of the zone furthest above it, the
// last on a tie. Groups of even targets so grow zone after zone and
// shrink newest first.
func (p *pool) spread(n int, t tmpl) {
	total := 0
	for _, z := range p.np.Locations {
		total += len(p.insts[z])
	}
	for ; total < n; total++ {
		z := p.nextZone()
		p.insts[z] = append(p.insts[z], p.newInstance(z, t))
	}
	for ; total > n; total-- {
		p.dropNewest(false)
	}
	// A group over its target and one under it (a setSize after
	// deleteInstances left the zones uneven) each move towards it.
	for {
		z := p.nextZone()
		if p.goal(z) <= len(p.insts[z]) || !p.dropNewest(true) {
			return
		}
		p.insts[z] = append(p.insts[z], p.newInstance(z, t))
	}
}

// dropNewest takes the newest instance of the zone furthest above its
// target size (the last on a tie); false when there is none, or, when
// over, none above its target.
func (p *pool) dropNewest(over bool) bool {
	z, most := "", 0
	for _, y := range p.np.Locations {
		if k := len(p.insts[y]); k > 0 && (z == "" || k-p.goal(y) >= most) {
			z, most = y, k-p.goal(y)
		}
	}
	if z == "" || over && most <= 0 {
		return false
	}
	p.insts[z] = p.insts[z][:len(p.insts[z])-1]
	return true
}

// nextZone is the zone whose group gets the pool's next instance: the one
// furthest below its target size, the first on a tie.
func (p *pool) nextZone() string {
	z, most := "", 0
	for _, y := range p.np.Locations {
		if d := p.goal(y) - len(p.insts[y]); z == "" || d > most {
			z, most = y, d
		}
	}
	return z
}

// replace makes at least k instances of template t, replacing the oldest
// that are not (a surge upgrade: a new instance, then the old one goes),
// and returns the first one left to replace, nil when none is.
func (p *pool) replace(t tmpl, k int) *instance {
	done := 0
	for _, l := range p.insts {
		for _, in := range l {
			if in.tmpl == t {
				done++
			}
		}
	}
	for _, z := range p.np.Locations {
		l := p.insts[z]
		for i := 0; i < len(l); i++ {
			if l[i].tmpl == t {
				continue
			}
			if done >= k {
				p.insts[z] = l
				return l[i]
			}
			l = append(slices.Delete(l, i, i+1), p.newInstance(z, t))
			i--
			done++
		}
		p.insts[z] = l
	}
	return nil
}

// nextMade is the instance being made now: while the pool grows, the next
// one of the zone whose turn it is; while it is upgraded, the surge
// instance that replaces old next. Nil when none is.
func (p *pool) nextMade(n int, t tmpl, old *instance) *instance {
	zone := ""
	switch {
	case p.op != nil && p.op.Running() && p.op.To > n && len(p.np.Locations) > 0:
		zone = p.nextZone()
	case old != nil:
		zone = old.zone
	default:
		return nil
	}
	if m := p.making; m != nil && m.zone == zone && m.tmpl == t {
		return m
	}
	p.making = nil
	return p.newInstance(zone, t)
}

// newInstance returns the instance being made in zone when it is of
// template t, else a new one, named as GKE's instance groups name them:
// their base instance name and four random characters.
func (p *pool) newInstance(zone string, t tmpl) *instance {
	if m := p.making; m != nil && m.zone == zone && m.tmpl == t {
		p.making = nil
		return m
	}
	p.made++
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", p.path(), zone, p.made)
	v := h.Sum64()
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for range 4 {
		b.WriteByte(chars[v%36])
		v /= 36
	}
	return &instance{zone: zone, name: p.base(zone) + "-" + b.String(), tmpl: t}
}

// specs are the pool's nodes as kube.SyncNodes takes them.
func (p *pool) specs() []kube.NodeSpec {
	var out []kube.NodeSpec
	labels, taints := map[string]map[string]string{}, p.nodeTaints()
	add := func(in *instance, ready bool) {
		if labels[in.zone] == nil {
			labels[in.zone] = p.nodeLabels(in.zone)
		}
		out = append(out, kube.NodeSpec{Name: in.name, Labels: labels[in.zone], Taints: taints, Ready: ready,
			KubeletVersion: "v" + in.tmpl.version, ProviderID: "gce://" + p.cluster.project + "/" + in.zone + "/" + in.name})
	}
	for _, z := range p.np.Locations {
		for _, in := range p.insts[z] {
			add(in, true)
		}
	}
	if p.making != nil {
		add(p.making, false)
	}
	return out
}

// nodeLabels are the labels GKE puts on the pool's nodes in zone: its own
// (README.md, "Nodes") and the pool's node labels.
func (p *pool) nodeLabels(zone string) map[string]string {
	cfg := p.np.Config
	family, _, _ := strings.Cut(cfg.MachineType, "-")
	os := "cos"
	if img := strings.ToUpper(cfg.ImageType); !strings.HasPrefix(img, "COS") {
		os, _, _ = strings.Cut(strings.ToLower(img), "_")
	}
	l := map[string]string{
		PoolLabel:                                p.np.Name,
		"cloud.google.com/machine-family":        family,
		"cloud.google.com/gke-os-distribution":   os,
		"cloud.google.com/gke-boot-disk":         cfg.DiskType,
		"cloud.google.com/gke-container-runtime": "containerd",
		"cloud.google.com/gke-provisioning":      "standard",
		"node.kubernetes.io/instance-type":       cfg.MachineType,
		"topology.kubernetes.io/region":          region(zone),
		"topology.kubernetes.io/zone":            zone,
		"topology.gke.io/zone":                   zone,
	}
	switch {
	case cfg.Spot:
		l["cloud.google.com/gke-provisioning"], l["cloud.google.com/gke-spot"] = "spot", "true"
	case cfg.Preemptible:
		l["cloud.google.com/gke-preemptible"] = "true"
	}
	maps.Copy(l, cfg.Labels)
	return l
}

// effects are GKE's taint effects as Kubernetes names them.
var effects = map[string]corev1.TaintEffect{
	"NO_SCHEDULE": corev1.TaintEffectNoSchedule, "PREFER_NO_SCHEDULE": corev1.TaintEffectPreferNoSchedule, "NO_EXECUTE": corev1.TaintEffectNoExecute,
}

// nodeTaints are the pool's taints (GKE's GPU taint among them) as its
// nodes carry them.
func (p *pool) nodeTaints() []corev1.Taint {
	var out []corev1.Taint
	for _, t := range p.np.Config.Taints {
		if t != nil {
			out = append(out, taintOf(t))
		}
	}
	return out
}

func taintOf(t *container.NodeTaint) corev1.Taint {
	return corev1.Taint{Key: t.Key, Value: t.Value, Effect: effects[t.Effect]}
}
