package reconcile

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// TestPickNodes: a scale-down takes the nodes not Ready first, then the
// cordoned ones, then the newest; on a provider that counts nodes per zone,
// as many from each zone.
func TestPickNodes(t *testing.T) {
	var perZone, whole provider.Profile
	for _, p := range catalog.Profiles() {
		caps := p.Capabilities()
		switch {
		case !caps.NodePools:
		case caps.CountPerZone && perZone == nil:
			perZone = p
		case !caps.CountPerZone && whole == nil:
			whole = p
		}
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	node := func(name, zone string, age int, ready, cordoned bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Hour)),
			Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
		n.Spec.Unschedulable = cordoned
		st := corev1.ConditionTrue
		if !ready {
			st = corev1.ConditionFalse
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
		return n
	}
	for _, tc := range []struct {
		name     string
		prof     provider.Profile
		zones    []string
		from, to int
		nodes    []*corev1.Node
		want     []string
	}{
		{"not Ready, then cordoned", whole, []string{"1"}, 3, 1,
			[]*corev1.Node{node("a", "z1", 9, true, false), node("b", "z1", 1, true, true), node("c", "z1", 2, false, false)}, []string{"b", "c"}},
		{"the newest", whole, []string{"1"}, 3, 2,
			[]*corev1.Node{node("a", "z1", 1, true, false), node("b", "z1", 3, true, false), node("c", "z1", 2, true, false)}, []string{"b"}},
		{"as many from each zone", perZone, []string{"1", "2"}, 4, 2,
			[]*corev1.Node{node("a1", "z1", 1, true, false), node("a2", "z1", 2, true, false), node("b1", "z2", 3, true, false), node("b2", "z2", 4, true, false)},
			[]string{"a2", "b2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{cfg: Config{Clock: clocktesting.NewFakeClock(t0)}}
			r := &clusterRun{c: c, prof: tc.prof, nodes: map[string][]*corev1.Node{"web": tc.nodes}}
			s := &poolScope{clusterRun: r, p: &kpool.NodePool{ProviderName: "web", Generation: 2},
				obs: &provider.Pool{PoolSpec: provider.PoolSpec{Count: tc.from}}, desired: provider.PoolSpec{Count: tc.to, Zones: tc.zones}}
			sd := s.pickNodes()
			if !slices.Equal(sd.Nodes, tc.want) || sd.From != tc.from || sd.To != tc.to || sd.Generation != 2 {
				t.Errorf("picked %+v, want %v", sd, tc.want)
			}
		})
	}
}
