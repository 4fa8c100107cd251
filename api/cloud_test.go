package api

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/store/testdb"
)

// TestCloudAccessIsTheOperators is issue 12's first attack at the API: a
// user cannot point a cluster at a host of their choosing, nor use a
// credential or subscription the operator did not grant them. The
// stand-in attacker never hears from kpool.
func TestCloudAccessIsTheOperators(t *testing.T) {
	var hits atomic.Int64
	evil := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer evil.Close()
	const (
		alice, bob = "alice@example.com", "bob@example.com"
		subA, subB = "0b1f6471-1bf0-4dda-aec3-11112222aaaa", "0b1f6471-1bf0-4dda-aec3-11112222bbbb"
		sovereign  = "https://arm.sovereign.example"
	)
	creds, err := provider.ParseCredentials([]byte(fmt.Sprintf(`
defaults:
  azure: shared
credentials:
  shared:
    type: azure
    kind: default
    scopes: ["*"]
    endpoints: [https://management.azure.com, %s]
    users: ["*"]
  team-a:
    type: azure
    kind: client-secret
    tenantId: 00000000-0000-0000-0000-0000000000aa
    clientId: 00000000-0000-0000-0000-0000000000bb
    secretEnv: TEAM_A_SECRET
    scopes: [%s]
    users: [%s]
`, sovereign, subA, alice)), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	access, err := auth.NewAccess([]string{admin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(testdb.SQLite(t), catalog.Registry())
	svc.Endpoints, _ = kpool.ParseOrigins([]string{sovereign})
	svc.Credentials = creds
	srv := httptest.NewServer(checkOpenAPI(t, NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	a := &testAPI{t: t, srv: srv}

	body := func(name, sub, endpoint, cred string) string {
		extra := ""
		if endpoint != "" {
			extra += fmt.Sprintf(`,"endpoint":%q`, endpoint)
		}
		if cred != "" {
			extra += fmt.Sprintf(`,"credential":%q`, cred)
		}
		return fmt.Sprintf(`{"name":%q,"spec":{"platform":{"type":"azure","azure":{"subscriptionId":%q,"resourceGroup":"rg","clusterName":%q,"location":"westeurope"}}%s}}`,
			name, sub, name, extra)
	}
	for _, tc := range []struct {
		name, who, body string
		status          int
		field           string
	}{
		{"user, public endpoint, default credential", bob, body("c1", subB, "", ""), 201, ""},
		{"user, attacker's endpoint", bob, body("c2", subB, evil.URL, ""), 403, "spec.endpoint"},
		{"user, allowed endpoint", bob, body("c3", subB, sovereign, ""), 201, ""},
		{"user, allowed endpoint spelt otherwise", bob, body("c4", subB, "HTTPS://ARM.Sovereign.Example:443/", ""), 201, ""},
		{"admin, attacker's endpoint: the credential does not go there", admin, body("c5", subB, evil.URL, ""), 403, "spec.endpoint"},
		{"user, a credential not granted", bob, body("c6", subA, "", "team-a"), 403, "spec.credential"},
		{"user, a credential that does not exist: as not granted", bob, body("c7", subA, "", "nope"), 403, "spec.credential"},
		{"granted user, credential's subscription", alice, body("c8", subA, "", "team-a"), 201, ""},
		{"granted user, another subscription", alice, body("c9", subB, "", "team-a"), 403, "spec.credential"},
		{"granted user, credential to an endpoint it may not go to", alice, body("c10", subA, sovereign, "team-a"), 403, "spec.endpoint"},
		{"malformed credential name", alice, body("c11", subA, "", "Team A"), 400, "spec.credential"},
		{"admin, any credential", admin, body("c12", subA, "", "team-a"), 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do("POST", "/api/v1/clusters", tc.body, "X-User-Email: "+tc.who)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.field != "" {
				e := r.errorBody(t)
				if len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
					t.Fatalf("fields %+v, want %s", e.Fields, tc.field)
				}
			}
		})
	}

	// Updates: a user may not move a cluster to the attacker, nor to a
	// credential not theirs; an admin's choice stays while the user edits
	// other fields.
	var c struct {
		ID   string `json:"id"`
		Spec struct {
			Endpoint string `json:"endpoint"`
		} `json:"spec"`
	}
	a.do("POST", "/api/v1/clusters", body("u1", subB, "", ""), "X-User-Email: "+bob).json(t, &c)
	patch := func(who, spec string) reply {
		return a.do("PATCH", "/api/v1/clusters/"+c.ID, `{"spec":`+spec+`}`, "X-User-Email: "+who, "Content-Type: application/merge-patch+json")
	}
	if r := patch(bob, fmt.Sprintf(`{"endpoint":%q}`, evil.URL)); r.status != 403 {
		t.Fatalf("user moving the cluster to the attacker: %d %s", r.status, r.body)
	}
	if r := patch(bob, `{"credential":"team-a"}`); r.status != 403 {
		t.Fatalf("user taking team-a's credential: %d %s", r.status, r.body)
	}
	if r := patch(admin, fmt.Sprintf(`{"endpoint":%q}`, sovereign)); r.status != 200 {
		t.Fatalf("admin: %d %s", r.status, r.body)
	}
	if r := patch(bob, `{"importPools":true}`); r.status != 200 {
		t.Fatalf("user editing another field: %d %s", r.status, r.body)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the attacker's server was called %d times", n)
	}
}

// TestCredentialGroupGrant: a credential granted to group:NAME may be
// picked, through the API, by a token whose holder is in the group (any
// case), and not by one outside it: 403 naming spec.credential, the same
// answer as for a credential that does not exist.
func TestCredentialGroupGrant(t *testing.T) {
	const subA = "0b1f6471-1bf0-4dda-aec3-11112222aaaa"
	creds, err := provider.ParseCredentials([]byte(`
credentials:
  team-a:
    type: azure
    kind: client-secret
    tenantId: 00000000-0000-0000-0000-0000000000aa
    clientId: 00000000-0000-0000-0000-0000000000bb
    secretEnv: TEAM_A_SECRET
    scopes: [`+subA+`]
    users: ["group:Team-A"]
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	st := testdb.SQLite(t)
	ts := st.(kpool.TokenStore)
	token := func(email string, groups ...string) string {
		tok, err := auth.CheckToken(auth.TokenRequest{User: email, Role: kpool.RoleUser, Groups: groups}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewTokenSecret()
		if err := ts.CreateToken(t.Context(), tok, hash); err != nil {
			t.Fatal(err)
		}
		return secret
	}
	svc := service.New(st, catalog.Registry())
	svc.Credentials = creds
	srv := httptest.NewServer(checkOpenAPI(t, NewServer(svc, auth.NewTokenAccess(ts), slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	a := &testAPI{t: t, srv: srv}
	body := func(name, cred string) string {
		return fmt.Sprintf(`{"name":%q,"spec":{"credential":%q,"platform":{"type":"azure","azure":{"subscriptionId":%q,"resourceGroup":"rg","clusterName":%q,"location":"westeurope"}}}}`,
			name, cred, subA, name)
	}
	for _, tc := range []struct {
		name, token, cred string
		status            int
	}{
		{"in the group", token("carol@example.com", "TEAM-A"), "team-a", 201},
		{"in the group among others", token("carol2@example.com", "dev", "team-a"), "team-a", 201},
		{"in another group", token("dave@example.com", "team-b"), "team-a", 403},
		{"in no group", token("erin@example.com"), "team-a", 403},
		{"in the group but no such credential", token("frank@example.com", "team-a"), "team-z", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do("POST", "/api/v1/clusters", body("c-"+strings.ReplaceAll(tc.name, " ", "-"), tc.cred),
				"Authorization: Bearer "+tc.token, "Content-Type: application/json")
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.status == 403 {
				if e := r.errorBody(t); len(e.Fields) != 1 || e.Fields[0].Field != "spec.credential" || !strings.Contains(e.Fields[0].Reason, "is available to you") {
					t.Fatalf("fields %+v, want spec.credential", e.Fields)
				}
			}
		})
	}
}

// TestGrantTakenAway: a credential's grant holds at the moment of use. A
// cluster registered with a credential granted to alice keeps working
// while the grant stands; once the operator gives it to carol instead (a
// restart with another credentials file), alice can no longer create or
// change pools in it (403 naming spec.credential), and the drivers refuse
// the credential for it (see provider's TestGrantHoldsAtUse).
func TestGrantTakenAway(t *testing.T) {
	const alice, carol = "alice@example.com", "carol@example.com"
	file := func(users string) *provider.CredentialSet {
		set, err := provider.ParseCredentials([]byte(`
credentials:
  team:
    type: azure
    kind: default
    scopes: ["*"]
    users: [`+users+`]
`), catalog.Profiles())
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	access, err := auth.NewAccess([]string{admin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(testdb.SQLite(t), catalog.Registry())
	svc.Credentials = file(alice)
	srv := httptest.NewServer(checkOpenAPI(t, NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	a := &testAPI{t: t, srv: srv}
	c := a.cluster(alice, "g-aks", `{"credential":"team","platform":{"type":"azure","azure":{"subscriptionId":"0b1f6471-1bf0-4dda-aec3-11112222aaaa","resourceGroup":"rg","clusterName":"g-aks","location":"westeurope"}}}`)
	pool := `{"name":"gp1","spec":{"nodeCount":1,"platform":{"azure":{"vmSize":"Standard_D2s_v5"}}}}`
	var p kpool.NodePool
	r := a.as(alice, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", pool)
	want(t, r, http.StatusCreated)
	r.json(t, &p)

	svc.Credentials = file(carol) // the operator gives the credential to carol
	e := wantError(t, a.as(alice, "POST", "/api/v1/clusters/"+c.ID+"/nodepools", strings.Replace(pool, "gp1", "gp2", 1)),
		http.StatusForbidden, kpool.CodeForbidden, "no longer granted")
	if len(e.Fields) != 1 || e.Fields[0].Field != "spec.credential" {
		t.Fatalf("fields %+v", e.Fields)
	}
	wantError(t, a.as(alice, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":3}}`), http.StatusForbidden, kpool.CodeForbidden, "no longer granted")
	// She may still delete it (the controllers then wait for a credential),
	// and an admin may give the cluster a credential it may use.
	want(t, a.as(admin, "PATCH", "/api/v1/clusters/"+c.ID, `{"spec":{"credential":"team"}}`), http.StatusOK)
	want(t, a.as(alice, "PATCH", "/api/v1/nodepools/"+p.ID, `{"spec":{"nodeCount":3}}`), http.StatusOK)
}
