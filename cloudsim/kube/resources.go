package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// object is a stored object: a Kubernetes kind with ObjectMeta.
type object interface {
	runtime.Object
	metav1.Object
}

// resource describes a kind the generic store serves: its names, as
// discovery lists them, the fields its fieldSelector takes (each kind's
// registry declares its own: pkg/registry/core/{node,pod}/strategy.go),
// and what its main resource's PUT/PATCH keeps of the stored object (the
// strategies' PrepareForUpdate keep status: only the status subresource
// or the emulator changes it).
type resource struct {
	gr         schema.GroupResource
	gvk        schema.GroupVersionKind
	namespaced bool
	short      []string
	categories []string
	verbs      []string
	newObj     func() object
	fields     func(object) fields.Set
	keepStatus func(old, nw object)
	// spec, when set, is what a write must change to raise the
	// generation (conventions: "metadata.generation ... incremented on
	// every change to spec"); kinds without it keep their generation.
	spec func(o object) any
}

var (
	allVerbs  = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	all       = []string{"all"} // the category kubectl get all lists (the registries' Categories())
	nodeRes   = &resource{gr: schema.GroupResource{Resource: "nodes"}, gvk: corev1.SchemeGroupVersion.WithKind("Node"), short: []string{"no"}, verbs: allVerbs, newObj: func() object { return &corev1.Node{} }, fields: nodeFields, keepStatus: func(o, n object) { n.(*corev1.Node).Status = o.(*corev1.Node).Status }}
	podRes    = &resource{gr: schema.GroupResource{Resource: "pods"}, gvk: corev1.SchemeGroupVersion.WithKind("Pod"), namespaced: true, short: []string{"po"}, categories: all, verbs: allVerbs, newObj: func() object { return &corev1.Pod{} }, fields: podFields, keepStatus: func(o, n object) { n.(*corev1.Pod).Status = o.(*corev1.Pod).Status }}
	pdbRes    = &resource{gr: schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, gvk: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), namespaced: true, short: []string{"pdb"}, verbs: allVerbs, newObj: func() object { return &policyv1.PodDisruptionBudget{} }, fields: metaFields, keepStatus: func(o, n object) { n.(*policyv1.PodDisruptionBudget).Status = o.(*policyv1.PodDisruptionBudget).Status }}
	depRes    = &resource{gr: Deployments, gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true, short: []string{"deploy"}, categories: all, verbs: allVerbs, newObj: func() object { return &appsv1.Deployment{} }, fields: metaFields, keepStatus: func(o, n object) { n.(*appsv1.Deployment).Status = o.(*appsv1.Deployment).Status }, spec: func(o object) any { return o.(*appsv1.Deployment).Spec }}
	dsRes     = &resource{gr: schema.GroupResource{Group: "apps", Resource: "daemonsets"}, gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), namespaced: true, short: []string{"ds"}, categories: all, verbs: allVerbs, newObj: func() object { return &appsv1.DaemonSet{} }, fields: metaFields, keepStatus: func(o, n object) { n.(*appsv1.DaemonSet).Status = o.(*appsv1.DaemonSet).Status }}
	resources = []*resource{nodeRes, podRes, pdbRes, depRes, dsRes}
)

func metaFields(o object) fields.Set {
	s := fields.Set{"metadata.name": o.GetName()}
	if o.GetNamespace() != "" {
		s["metadata.namespace"] = o.GetNamespace()
	}
	return s
}

// nodeFields: the Node registry's NodeToSelectableFields.
func nodeFields(o object) fields.Set {
	n := o.(*corev1.Node)
	s := metaFields(o)
	s["spec.unschedulable"] = boolString(n.Spec.Unschedulable)
	return s
}

// podFields: the Pod registry's ToSelectableFields (the ones drains use).
func podFields(o object) fields.Set {
	p := o.(*corev1.Pod)
	s := metaFields(o)
	s["spec.nodeName"] = p.Spec.NodeName
	s["spec.schedulerName"] = p.Spec.SchedulerName
	s["spec.serviceAccountName"] = p.Spec.ServiceAccountName
	s["status.phase"] = string(p.Status.Phase)
	s["status.podIP"] = p.Status.PodIP
	return s
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
