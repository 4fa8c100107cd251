package driver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpool/kpool/provider"
)

func withCommand(args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: autoscalerDeployment, Command: args}}}}}}
}

// TestSetEntry: one pool's entry is added after the last entry,
// changed in place, or taken out; every other argument and entry stays.
func TestSetEntry(t *testing.T) {
	base := []string{"./cluster-autoscaler", "--cloud-provider=civo", "--nodes=3:10:workers", "--skip-nodes-with-local-storage=false"}
	for _, tc := range []struct {
		name    string
		in      []string
		b       *bounds
		want    []string
		changed bool
	}{
		{"add after the last entry", base, &bounds{2, 6}, []string{"./cluster-autoscaler", "--cloud-provider=civo", "--nodes=3:10:workers", "--nodes=2:6:web", "--skip-nodes-with-local-storage=false"}, true},
		{"no entry at all: at the end", []string{"./ca", "--cloud-provider=civo"}, &bounds{1, 2}, []string{"./ca", "--cloud-provider=civo", "--nodes=1:2:web"}, true},
		{"change in place", []string{"./ca", "--nodes=1:3:web", "--nodes=3:10:workers"}, &bounds{2, 6}, []string{"./ca", "--nodes=2:6:web", "--nodes=3:10:workers"}, true},
		{"the same: unchanged", []string{"./ca", "--nodes=2:6:web"}, &bounds{2, 6}, []string{"./ca", "--nodes=2:6:web"}, false},
		{"a duplicate goes", []string{"./ca", "--nodes=2:6:web", "--nodes=1:2:web"}, &bounds{2, 6}, []string{"./ca", "--nodes=2:6:web"}, true},
		{"remove", []string{"./ca", "--nodes=2:6:web", "--nodes=3:10:workers"}, nil, []string{"./ca", "--nodes=3:10:workers"}, true},
		{"remove one that is not there", base, nil, base, false},
		{"a longer pool id is another pool", []string{"./ca", "--nodes=1:2:web-2"}, nil, []string{"./ca", "--nodes=1:2:web-2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := withCommand(slices.Clone(tc.in)...)
			changed := setEntry(d, "web", tc.b)
			if got := d.Spec.Template.Spec.Containers[0].Command; changed != tc.changed || !slices.Equal(got, tc.want) {
				t.Fatalf("%v (changed %v), want %v (%v)", got, changed, tc.want, tc.changed)
			}
		})
	}
}

// racing is a Deployment client whose first Update loses to another
// pool's write: the stored object moved on, so the API answers 409.
type racing struct {
	stored  *appsv1.Deployment
	rv      int
	updates int
}

func (r *racing) Get(context.Context, string, metav1.GetOptions) (*appsv1.Deployment, error) {
	return r.stored.DeepCopy(), nil
}

func (r *racing) Update(_ context.Context, d *appsv1.Deployment, _ metav1.UpdateOptions) (*appsv1.Deployment, error) {
	r.updates++
	if r.updates == 1 { // another pool's entry landed first
		setEntry(r.stored, "api", &bounds{1, 4})
		r.rv++
		r.stored.ResourceVersion = string(rune('0' + r.rv))
	}
	if d.ResourceVersion != r.stored.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, d.Name, errors.New("the object has been modified"))
	}
	r.rv++
	d.ResourceVersion = string(rune('0' + r.rv))
	r.stored = d.DeepCopy()
	return d, nil
}

// TestSetRetriesOnConflict: a 409 re-reads the Deployment and writes
// again, keeping the entry that came first.
func TestSetRetriesOnConflict(t *testing.T) {
	r := &racing{stored: withCommand("./ca", "--nodes=1:5:workers")}
	r.stored.ResourceVersion = "0"
	a := &autoscaler{deps: r}
	if err := a.set(context.Background(), "web", &bounds{2, 6}); err != nil {
		t.Fatal(err)
	}
	got := parseEntries(r.stored)
	if r.updates != 2 || got["web"] != (bounds{2, 6}) || got["api"] != (bounds{1, 4}) || got["workers"] != (bounds{1, 5}) {
		t.Fatalf("after %d updates: %v", r.updates, got)
	}
}

// TestKubeClient: the client built from Civo's kubeconfig refuses a
// credential plugin, a file named by path, a server that is not https and
// one its server check refuses, and sends nothing to another host than
// the kubeconfig's server.
func TestKubeClient(t *testing.T) {
	const exec = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	const plain = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	const file = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', certificate-authority: /etc/ssl/x.pem}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	good := strings.Replace(plain, "http://", "https://", 1)
	allow := func(string) error { return nil }
	for name, kc := range map[string]string{"exec plugin": exec, "plain http": plain, "none": "", "a CA file": file, "not YAML": "{"} {
		if _, err := newKubeClient(kc, allow, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := newKubeClient(good, allow, 0); err != nil {
		t.Fatalf("a token kubeconfig: %v", err)
	}
	checked := ""
	refuse := func(server string) error { checked = server; return &provider.RefusedHostError{Host: server} }
	if _, err := newKubeClient(good, refuse, 0); !provider.IsRefusedHost(err) || checked != "https://127.0.0.1:1" {
		t.Fatalf("a server the check refuses: %v (checked %q)", err, checked)
	}
	sent := false
	rt := &serverOnly{origin: "https://127.0.0.1:6443", base: roundTrip(func(*http.Request) (*http.Response, error) { sent = true; return nil, errors.New("x") })}
	req, _ := http.NewRequest(http.MethodGet, "https://169.254.169.254/latest", nil)
	_, err := rt.RoundTrip(req)
	var refused *kubeRefusedError
	if !errors.As(err, &refused) || sent || !provider.IsPermissionDenied(classifyKube(err)) {
		t.Fatalf("another host: %v (sent %v)", err, sent)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestClassifyKube: the Kubernetes API's errors as provider kinds.
func TestClassifyKube(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		kind provider.Kind
	}{
		{apierrors.NewConflict(gr, "ca", errors.New("modified")), provider.KindTransient},
		{apierrors.NewNotFound(gr, "ca"), provider.KindTransient},
		{apierrors.NewUnauthorized("Unauthorized"), provider.KindPermissionDenied},
		{apierrors.NewForbidden(gr, "ca", errors.New("no")), provider.KindPermissionDenied},
		{apierrors.NewTooManyRequests("slow down", 2), provider.KindThrottled},
		{apierrors.NewInternalError(errors.New("etcd")), provider.KindTransient},
		{errors.New("connection refused"), provider.KindTransient},
	} {
		var pe *provider.Error
		if err := classifyKube(tc.err); !errors.As(err, &pe) || pe.Kind != tc.kind {
			t.Errorf("%v: %v, want %s", tc.err, err, tc.kind)
		}
	}
}

// TestDropDefault: the application's shipped 3:10:workers goes, verbatim
// only; a workers entry with other bounds is a person's and stays.
func TestDropDefault(t *testing.T) {
	for _, tc := range []struct {
		command []string
		dropped bool
		want    []string
	}{
		{[]string{"./ca", "--nodes=3:10:workers", "--nodes=2:6:web"}, true, []string{"./ca", "--nodes=2:6:web"}},
		{[]string{"./ca", "--nodes=1:5:workers", "--nodes=2:6:web"}, false, []string{"./ca", "--nodes=1:5:workers", "--nodes=2:6:web"}},
		{[]string{"./ca"}, false, []string{"./ca"}},
	} {
		dep := withCommand(tc.command...)
		if got := dropDefault(dep); got != tc.dropped || !slices.Equal(dep.Spec.Template.Spec.Containers[0].Command, tc.want) {
			t.Errorf("dropDefault(%v) = %v, %v; want %v, %v", tc.command, got, dep.Spec.Template.Spec.Containers[0].Command, tc.dropped, tc.want)
		}
	}
}
