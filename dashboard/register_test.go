package dashboard

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"
	"github.com/kpool/kpool/store/storetest"
)

// aksForm is the register form of an AKS cluster; without drops a field.
func aksForm(name string, without ...string) url.Values {
	f := url.Values{"name": {name}, "spec.platform.type": {"azure"},
		"spec.platform.azure.subscriptionId": {"0b1f6471-1bf0-4dda-aec3-111122223333"},
		"spec.platform.azure.resourceGroup":  {"rg"}, "spec.platform.azure.clusterName": {name},
		"spec.platform.azure.location": {"westeurope"},
		// Another platform's field, shown on the page without JavaScript:
		// not read for an AKS cluster.
		"spec.platform.gcp.projectId": {"ignored"}}
	for _, k := range without {
		f.Del(k)
	}
	return f
}

// TestRegisterCluster: the fleet page's register form creates a cluster
// through the service (its checks, its field-named errors shown next to
// the inputs), is refused to a controller and to another site's page.
func TestRegisterCluster(t *testing.T) {
	s := newSite(t, Options{}, nil)
	_, user := s.token(t, owner)
	controller := s.controllerToken(t)
	same := []string{"cookie", user, "Sec-Fetch-Site", "same-origin"}
	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
		status  int
		want    []string // in the answer's body (or its Location)
	}{
		{"made", aksForm("prod"), same, http.StatusSeeOther, []string{"/clusters/"}},
		{"a required field left out", aksForm("dev", "spec.platform.azure.subscriptionId"), same, http.StatusBadRequest,
			[]string{`data-code="VALIDATION_ERROR"`, `<span class="field-error" data-field="spec.platform.azure.subscriptionId">`,
				`value="westeurope"`, `value="dev"`}},
		{"a bad name", aksForm("Not A Name"), same, http.StatusBadRequest, []string{`<span class="field-error" data-field="name">`}},
		{"no platform", url.Values{"name": {"x"}}, same, http.StatusBadRequest, []string{`data-field="spec.platform.type"`}},
		{"a bad map line", url.Values{"name": {"eks"}, "spec.platform.type": {"aws"}, "spec.platform.aws.subnets": {"nope"}}, same,
			http.StatusBadRequest, []string{`<span class="field-error" data-field="spec.platform.aws.subnets">`, "is not KEY=VALUE"}},
		{"an endpoint not allowed", func() url.Values { f := aksForm("emu"); f.Set("spec.endpoint", "https://evil.example"); return f }(),
			same, http.StatusForbidden, []string{`<code>spec.endpoint</code>: not on the operator`}},
		{"the same cloud cluster again", aksForm("prod"), same, http.StatusConflict, []string{`data-code="CONFLICT"`}},
		{"a controller", aksForm("ctl"), []string{"cookie", controller, "Sec-Fetch-Site", "same-origin"}, http.StatusForbidden, []string{"FORBIDDEN"}},
		{"another site's page", aksForm("csrf"), []string{"cookie", user, "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, []string{"refused"}},
		{"another Origin", aksForm("csrf"), []string{"cookie", user, "Origin", "http://evil.example"}, http.StatusForbidden, []string{"refused"}},
		{"not signed in", aksForm("anon"), []string{"Sec-Fetch-Site", "same-origin"}, http.StatusSeeOther, []string{"/login"}},
	} {
		resp := s.do(t, http.MethodPost, "/clusters", tc.form, tc.headers...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(body) + resp.Header.Get("Location")
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d:\n%s", tc.name, resp.StatusCode, tc.status, got)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in:\n%s", tc.name, w, got)
			}
		}
	}
	// Only the first registration was made, by its user.
	cs, err := s.h.o.Service.Clusters(storetest.Ctx(owner), service.ListOptions{Limit: 10})
	if err != nil || len(cs.Items) != 1 || cs.Items[0].Name != "prod" || cs.Items[0].CreatedBy != owner ||
		cs.Items[0].Spec.Platform.Type != "azure" {
		t.Fatalf("clusters after the form: %+v, %v", cs, err)
	}
	// The endpoint is asked for only of a user who may set one: with an
	// operator's list of allowed endpoints (an admin may set any).
	for _, allowed := range []string{"", "https://emulator.example"} {
		o, err := kpool.ParseOrigins(strings.Fields(allowed))
		if err != nil {
			t.Fatal(err)
		}
		s.h.o.Service.Endpoints = o
		resp := s.do(t, http.MethodGet, "/clusters/new", nil, "cookie", user)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `id="r-endpoint"`) != (allowed != "") || !strings.Contains(string(body), allowed) {
			t.Errorf("allowed endpoints %q: the endpoint field shown: %v", allowed, strings.Contains(string(body), `id="r-endpoint"`))
		}
	}
	// The fleet page offers the form to a user, not to a controller.
	for _, tc := range []struct {
		who   string
		token string
		link  bool
		form  int
	}{{"a user", user, true, http.StatusOK}, {"a controller", controller, false, http.StatusForbidden}} {
		resp := s.do(t, http.MethodGet, "/", nil, "cookie", tc.token)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `id="register-link"`) != tc.link {
			t.Errorf("%s: the fleet page's register link shown: %v", tc.who, !tc.link)
		}
		resp = s.do(t, http.MethodGet, "/clusters/new", nil, "cookie", tc.token)
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.form || (tc.form == http.StatusOK && !strings.Contains(string(body), `<form id="register" class="card" method="post" action="/clusters">`)) {
			t.Errorf("%s: the register form: %d, want %d", tc.who, resp.StatusCode, tc.form)
		}
	}
}

// controllerToken makes a controller's API token (it may report status,
// not register clusters) and returns its secret.
func (s *site) controllerToken(t *testing.T) string {
	t.Helper()
	tok, err := auth.CheckToken(auth.TokenRequest{User: "ctl@example.com", Role: kpool.RoleController, ControllerNames: []string{"test-controller"},
		Scope: kpool.ControllerScope{Platforms: []kpool.PlatformType{"azure"}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewTokenSecret()
	if err := s.tokens.CreateToken(t.Context(), tok, hash); err != nil {
		t.Fatal(err)
	}
	return secret
}
