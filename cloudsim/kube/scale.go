package kube

import (
	"mime"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scaleOf is a Deployment's scale subresource, as the API server's
// deployment registry makes it (scaleFromDeployment): autoscaling/v1
// Scale with the Deployment's metadata, spec.replicas (1 when not set),
// status.replicas and the selector as a string.
func scaleOf(d *appsv1.Deployment) *autoscalingv1.Scale {
	sel := ""
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		sel = s.String()
	}
	return &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, UID: d.UID, ResourceVersion: d.ResourceVersion,
			CreationTimestamp: d.CreationTimestamp},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(replicas(d))}, //nolint:gosec // replicas are int32
		Status: autoscalingv1.ScaleStatus{Replicas: d.Status.Replicas, Selector: sel}}
}

// scale answers GET, PUT and PATCH of …/deployments/{name}/scale (what
// kubectl scale and client-go's GetScale/UpdateScale use): a write sets
// the Deployment's spec.replicas, with the Scale's resourceVersion, when
// it has one, a precondition on the Deployment's (409 Conflict), as the
// registry's ScaleREST does (kubernetes pkg/registry/apps/deployment/
// storage). The controllers then act on the new count.
func (a *API) scale(w http.ResponseWriter, r *http.Request, c *cluster, ns, name string) {
	var body []byte
	var err error
	if r.Method != http.MethodGet {
		if body, err = readBody(r); err != nil {
			writeStatus(w, err)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.settle(c)
	o, ok := c.objects(depRes)[ns+"/"+name]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(depRes.gr, name))
		return
	}
	d := o.DeepCopyObject().(*appsv1.Deployment)
	in := &autoscalingv1.Scale{}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, scaleOf(d))
		return
	case http.MethodPut:
		err = decodeAs(r.Header.Get("Content-Type"), body, autoscalingv1.SchemeGroupVersion.WithKind("Scale"), in)
	case http.MethodPatch:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		err = applyPatch(mt, scaleOf(d), body, in)
	default:
		err = apierrors.NewMethodNotSupported(depRes.gr, "scale")
	}
	if err == nil && in.Name != "" && in.Name != name {
		err = apierrors.NewBadRequest("the name of the object (" + in.Name + ") does not match the name on the URL (" + name + ")")
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	d.ResourceVersion = in.ResourceVersion
	d.Spec.Replicas = &in.Spec.Replicas
	out, err := a.updateObj(c, depRes, d, true)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, scaleOf(out.(*appsv1.Deployment)))
}
