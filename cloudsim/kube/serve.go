package kube

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

// maxBody is the largest body read (the API server's limit is 3 MiB).
const maxBody = 3 << 20

// codecs decode request bodies in the media types the API server takes
// for built-in kinds: JSON, YAML and Kubernetes' protobuf (client-go's
// typed clients send protobuf by default).
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, autoscalingv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme, policyv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme)
}()

// decodeAs reads a body of kind gvk into into, in the body's media type:
// an unknown one is 415, a body that is not of the kind 400.
func decodeAs(contentType string, body []byte, gvk schema.GroupVersionKind, into runtime.Object) error {
	mt, _, err := mime.ParseMediaType(contentType)
	if contentType == "" {
		mt, err = runtime.ContentTypeJSON, nil
	}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mt)
	if err != nil || !ok {
		return unsupportedMediaType()
	}
	obj, _, err := info.Serializer.Decode(body, &gvk, into)
	if err != nil {
		return apierrors.NewBadRequest("the object provided is unrecognized: " + err.Error())
	}
	if obj != into {
		return apierrors.NewBadRequest("the object provided is not a " + gvk.Kind)
	}
	return nil
}

func unsupportedMediaType() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType, Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"}}
}

// authorized checks the request's bearer token.
func authorized(r *http.Request, token string) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "bearer") && strings.TrimSpace(got) == token
}

// notFound is the API server's answer for a path it does not serve.
func notFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}
}

// readBody reads a request body up to the API server's limit.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		return nil, apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	}
	return body, nil
}

// writeStatus writes an error as the API server does: a metav1.Status
// with its code as the HTTP status.
func writeStatus(w http.ResponseWriter, err error) {
	var st *apierrors.StatusError
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(s.Code), &s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// kubeconfig is a kubeconfig (clientcmd's v1 Config, in YAML) of one
// cluster, one user with a bearer token, and one context, current.
func kubeconfig(server, name string, ca []byte, token string) string {
	cfg := clientcmdv1.Config{
		Kind: "Config", APIVersion: "v1", CurrentContext: name,
		Clusters:  []clientcmdv1.NamedCluster{{Name: name, Cluster: clientcmdv1.Cluster{Server: server, CertificateAuthorityData: ca}}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{Name: name, AuthInfo: clientcmdv1.AuthInfo{Token: token}}},
		Contexts:  []clientcmdv1.NamedContext{{Name: name, Context: clientcmdv1.Context{Cluster: name, AuthInfo: name}}},
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		panic(err) // a fixed shape: never fails
	}
	return string(out)
}
