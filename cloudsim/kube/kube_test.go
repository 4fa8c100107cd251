package kube_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"

	"github.com/kpool/kpool/cloudsim/kube"
	"github.com/kpool/kpool/cloudsim/kube/kubetest"
)

// serve serves an API with cluster "c1" over TLS and returns a typed
// client built from the cluster's kubeconfig, as a driver builds it.
func serve(t *testing.T) (*kube.API, appsclient.DeploymentInterface, string) {
	t.Helper()
	s := kubetest.Serve(t, nil)
	return s.API, s.Clientset(t, "c1").AppsV1().Deployments("kube-system"), s.URL
}

func deployment(name string, args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: name, Command: args}}}}}}
}

// TestDeployments: client-go's typed client creates, gets, lists and
// replaces Deployments; a stale resourceVersion is a Conflict, a missing
// object NotFound, a second create AlreadyExists, as the API server
// answers them.
func TestDeployments(t *testing.T) {
	ctx := context.Background()
	_, deps, _ := serve(t)
	created, err := deps.Create(ctx, deployment("ca", "a"), metav1.CreateOptions{})
	if err != nil || created.ResourceVersion == "" || created.Generation != 1 || created.UID == "" {
		t.Fatalf("create: %+v, %v", created.ObjectMeta, err)
	}
	// The Deployment controller writes its status at once: a newer
	// resourceVersion than the create's.
	got, err := deps.Get(ctx, "ca", metav1.GetOptions{})
	if err != nil || got.UID != created.UID || got.Status.ObservedGeneration != 1 {
		t.Fatalf("get: %v, %v", got, err)
	}
	got.Spec.Template.Spec.Containers[0].Command = []string{"b"}
	updated, err := deps.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.ResourceVersion == got.ResourceVersion || updated.Generation != 2 {
		t.Fatalf("update: %+v, %v", updated.ObjectMeta, err)
	}
	list, err := deps.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		is   func(error) bool
		code int32
	}{
		{"stale resourceVersion", func() error { _, err := deps.Update(ctx, got, metav1.UpdateOptions{}); return err }, apierrors.IsConflict, http.StatusConflict},
		{"get a missing one", func() error { _, err := deps.Get(ctx, "none", metav1.GetOptions{}); return err }, apierrors.IsNotFound, http.StatusNotFound},
		{"update a missing one", func() error { _, err := deps.Update(ctx, deployment("none"), metav1.UpdateOptions{}); return err }, apierrors.IsNotFound, http.StatusNotFound},
		{"create twice", func() error { _, err := deps.Create(ctx, deployment("ca"), metav1.CreateOptions{}); return err }, apierrors.IsAlreadyExists, http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var se *apierrors.StatusError
			if !tc.is(err) || !errors.As(err, &se) || se.ErrStatus.Code != tc.code {
				t.Fatalf("got %v (%T)", err, err)
			}
		})
	}
	// An update without a resourceVersion is unconditional.
	got.ResourceVersion = ""
	if _, err := deps.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAuth: a request without the cluster's token, or for a cluster the
// API does not know, is 401 with a Status; a path it does not serve is 404.
func TestAuth(t *testing.T) {
	api, _, base := serve(t)
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/k8s/c1/apis/apps/v1/namespaces/kube-system/deployments", "", http.StatusUnauthorized},
		{"wrong token", "/k8s/c1/apis/apps/v1/namespaces/kube-system/deployments", "nope", http.StatusUnauthorized},
		{"unknown cluster", "/k8s/c2/apis/apps/v1/namespaces/kube-system/deployments", api.AddCluster("c1"), http.StatusUnauthorized},
		{"unserved path", "/k8s/c1/api/v1/secrets", api.AddCluster("c1"), http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, base+tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := insecure().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s, want %d", resp.StatusCode, resp.Header.Get("Content-Type"), tc.want)
			}
		})
	}
}
