package provider_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
)

// TestParseCredentials: every bad credentials file is refused at start,
// naming the key at fault; secrets are never inline.
func TestParseCredentials(t *testing.T) {
	const ok = `{"defaults":{"azure":"a"},"credentials":{"a":{"type":"azure","kind":"default","scopes":["*"]}}}`
	if _, err := provider.ParseCredentials([]byte(ok), catalog.Profiles()); err != nil {
		t.Fatalf("JSON file: %v", err)
	}
	const keys = `credentials:
  oci: {type: oci, kind: api-key, secretFile: /etc/kpool/oci.pem, tenantId: ocid1.tenancy.oc1..aaaa, clientId: ocid1.user.oc1..bbbb,
        fingerprint: '12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0', scopes: [ocid1.compartment.oc1..cccc]}
  civo: {type: civo, kind: api-key, secretEnv: CIVO_TOKEN, scopes: [LON1]}`
	if _, err := provider.ParseCredentials([]byte(keys), catalog.Profiles()); err != nil {
		t.Fatalf("OCI and Civo API keys: %v", err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"no credentials", `defaults: {}`, "none configured"},
		{"inline secret", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, secret: hunter2, scopes: ['*']}", "unknown field"},
		{"secret from nowhere", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, scopes: ['*']}", "exactly one of secretEnv and secretFile"},
		{"no scopes", "credentials:\n  a: {type: azure, kind: default}", "credentials.a.scopes: required"},
		{"http endpoint", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], endpoints: ['http://arm.example']}", "credentials.a.endpoints"},
		{"endpoint with a path", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], endpoints: ['https://arm.example/x']}", "without a path"},
		{"platform without credentials", "credentials:\n  a: {type: k3s, kind: default, scopes: ['*']}", "takes no credentials"},
		{"unknown kind", "credentials:\n  a: {type: azure, kind: magic, scopes: ['*']}", "credentials.a.kind"},
		{"bad user", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['Alice <a@x.example>']}", "credentials.a.users[0]"},
		{"empty group", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['a@x.example', 'group:']}", "credentials.a.users[1]: empty group name"},
		{"blank group", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['group:   ']}", "credentials.a.users[0]: empty group name"},
		{"group with a control character", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: [\"group:a\\tb\"]}", "credentials.a.users[0]: a group name with control characters"},
		{"group too long", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['group:" + strings.Repeat("g", 257) + "']}", "credentials.a.users[0]: a group name of 257 bytes"},
		{"another kind of entry", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['role:ops']}", "credentials.a.users[0]: \"role:ops\": an entry is an e-mail address, *, group:NAME or team:NAME"},
		{"bad team", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['team:Ops!']}", "credentials.a.users[0]: \"Ops!\" is not a team name"},
		{"secretEnv not a name", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretEnv: 'pasted s3cret!', scopes: ['*']}", "credentials.a.secretEnv: not an environment variable name"},
		{"authority over http", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretEnv: S, authority: 'http://login.example', scopes: ['*']}", "credentials.a.authority"},
		{"authority with a path", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretEnv: S, authority: 'https://login.example/tenant', scopes: ['*']}", "credentials.a.authority"},
		{"authority of the default chain", "credentials:\n  a: {type: azure, kind: default, authority: 'https://login.example', scopes: ['*']}", "takes no tenantId, clientId, secret or authority"},
		{"api key on a platform without them", "credentials:\n  a: {type: azure, kind: api-key, secretEnv: K, scopes: ['*']}", "credentials.a.kind: platform azure takes no API key"},
		{"civo key inline", "credentials:\n  a: {type: civo, kind: api-key, scopes: ['LON1']}", "exactly one of secretEnv and secretFile"},
		{"civo key with a tenancy", "credentials:\n  a: {type: civo, kind: api-key, secretEnv: CIVO_KEY, tenantId: t, scopes: ['LON1']}", "takes no tenantId"},
		{"civo client secret", "credentials:\n  a: {type: civo, kind: client-secret, tenantId: t, clientId: c, secretEnv: S, scopes: ['*']}", "not a Civo credential"},
		{"oci key without a user", "credentials:\n  a: {type: oci, kind: api-key, secretFile: /k.pem, tenantId: ocid1.tenancy.oc1..aaaa, fingerprint: '12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0', scopes: ['*']}", "clientId: required"},
		{"oci key with a bad fingerprint", "credentials:\n  a: {type: oci, kind: api-key, secretFile: /k.pem, tenantId: ocid1.tenancy.oc1..aaaa, clientId: ocid1.user.oc1..bbbb, fingerprint: nope, scopes: ['*']}", "fingerprint: required"},
		{"fingerprint on a default", "credentials:\n  a: {type: oci, kind: default, fingerprint: '12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0', scopes: ['*']}", "only an api-key credential has one"},
		{"bad name", "credentials:\n  A B: {type: azure, kind: default, scopes: ['*']}", "name must be"},
		{"default unknown", "defaults: {azure: b}\ncredentials:\n  a: {type: azure, kind: default, scopes: ['*']}", "defaults.azure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.ParseCredentials([]byte(tc.file), catalog.Profiles())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error echoes what may be a secret: %v", err)
			}
		})
	}
}

// TestCredentialSecret: a client secret comes from its variable or file.
func TestCredentialSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_TEST_SECRET", "from-env")
	set, err := provider.ParseCredentials([]byte(`
credentials:
  env: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretEnv: KPOOL_TEST_SECRET, scopes: ['*']}
  file: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretFile: `+path+`, scopes: ['*']}
  unset: {type: azure, kind: client-secret, tenantId: t, clientId: c, secretEnv: KPOOL_TEST_UNSET, scopes: ['*']}
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "env,file,unset" {
		t.Fatalf("names %s", got)
	}
	for name, want := range map[string]string{"env": "from-env", "file": "from-file", "unset": ""} {
		c, ok := set.Credential(name)
		if !ok {
			t.Fatalf("no credential %s", name)
		}
		got, err := c.Secret()
		if got != want || (want == "") != (err != nil) {
			t.Fatalf("%s: %q, %v", name, got, err)
		}
	}
}

// TestCredentialGroups: a credential's users may name groups (group:NAME,
// compared without case); an identity in one of them may use it, as may
// the addresses listed, everyone for "*", and admins always.
func TestCredentialGroups(t *testing.T) {
	set, err := provider.ParseCredentials([]byte(`
credentials:
  team: {type: azure, kind: default, scopes: ['*'], users: [alice@example.com, 'group:Platform-Team', 'GROUP: cn=ops,ou=groups']}
  open: {type: azure, kind: default, scopes: ['*'], users: ['*']}
  admins-only: {type: azure, kind: default, scopes: ['*']}
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		id    kpool.Identity
		cred  string
		grant bool
	}{
		{"listed address", kpool.Identity{Email: "Alice@Example.com"}, "team", true},
		{"in the group", kpool.Identity{Email: "bob@example.com", Groups: []string{"dev", "platform-team"}}, "team", true},
		{"in the other group", kpool.Identity{Email: "carol@example.com", Groups: []string{"cn=ops,ou=groups"}}, "team", true},
		{"in another group", kpool.Identity{Email: "dave@example.com", Groups: []string{"platform-team-b"}}, "team", false},
		{"in no group", kpool.Identity{Email: "erin@example.com"}, "team", false},
		{"a group named like an address", kpool.Identity{Email: "frank@example.com", Groups: []string{"alice@example.com"}}, "team", false},
		{"admin", kpool.Identity{Email: "root@example.com", Admin: true}, "team", true},
		{"everyone", kpool.Identity{Email: "erin@example.com"}, "open", true},
		{"no users: admins only", kpool.Identity{Email: "bob@example.com", Groups: []string{"platform-team"}}, "admins-only", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := set.Credential(tc.cred)
			if !ok {
				t.Fatalf("no credential %s", tc.cred)
			}
			if got := c.Granted(&tc.id, ""); got != tc.grant {
				t.Fatalf("Granted = %v, want %v", got, tc.grant)
			}
			spec := &kpool.ClusterSpec{Credential: tc.cred}
			spec.Platform.Type = kpool.PlatformAzure
			spec.Platform.Azure = &kpool.AzureCluster{SubscriptionID: "s"}
			_, err := set.Grant(&tc.id, "", spec)
			var e *kpool.Error
			switch {
			case tc.grant && err != nil:
				t.Fatalf("Grant: %v", err)
			case !tc.grant && (!errors.As(err, &e) || e.Code != kpool.CodeForbidden || len(e.Fields) != 1 || e.Fields[0].Field != "spec.credential"):
				t.Fatalf("Grant: %v, want 403 on spec.credential", err)
			}
		})
	}
}

// TestServiceAccountCredential: a GCP service account's key comes from a
// file or a variable, never inline; scopes are project ids.
func TestServiceAccountCredential(t *testing.T) {
	set, err := provider.ParseCredentials([]byte(`
defaults: {gcp: sa}
credentials:
  sa: {type: gcp, kind: service-account, secretFile: /etc/kpool/sa.json, scopes: [acme-prod], endpoints: ['https://gke.example']}
`), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	c := &kpool.Cluster{Name: "c", Spec: kpool.ClusterSpec{Endpoint: "https://gke.example", Platform: kpool.ClusterPlatform{Type: kpool.PlatformGCP,
		GCP: &kpool.GCPCluster{ProjectID: "acme-prod", Location: "us-central1", ClusterName: "gke"}}}}
	if _, err := set.Resolve(c); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	other := *c
	other.Spec.Platform.GCP = &kpool.GCPCluster{ProjectID: "acme-dev", Location: "us-central1", ClusterName: "gke"}
	if _, err := set.Resolve(&other); !provider.IsValidation(err) || !strings.Contains(err.Error(), `project "acme-dev"`) {
		t.Fatalf("another project: %v", err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"inline key", "credentials:\n  a: {type: gcp, kind: service-account, key: '{}', scopes: ['*']}", "unknown field"},
		{"no key", "credentials:\n  a: {type: gcp, kind: service-account, scopes: ['*']}", "exactly one of secretEnv and secretFile"},
		{"both", "credentials:\n  a: {type: gcp, kind: service-account, secretEnv: K, secretFile: /k, scopes: ['*']}", "exactly one of secretEnv and secretFile"},
		{"tenant", "credentials:\n  a: {type: gcp, kind: service-account, tenantId: t, secretEnv: K, scopes: ['*']}", "takes no tenantId"},
	} {
		if _, err := provider.ParseCredentials([]byte(tc.file), catalog.Profiles()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTeamCredentials: a credential granted to team:NAME is the team's
// admins', for the team's clusters only.
func TestTeamCredentials(t *testing.T) {
	set, err := provider.ParseCredentials([]byte("credentials:\n  shared: {type: azure, kind: default, scopes: ['*'], users: ['team:platform']}"), catalog.Profiles())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Credential("shared")
	for _, tc := range []struct {
		groups []string
		team   string
		grant  bool
	}{
		{[]string{"platform:admin"}, "platform", true},
		{[]string{"platform:operator"}, "platform", false},
		{[]string{"platform:viewer", "platform:admin"}, "platform", true},
		{[]string{"platform:admin"}, "", false},
		{[]string{"platform:admin"}, "data", false},
		{[]string{"data:admin"}, "platform", false},
	} {
		id := &kpool.Identity{Email: "a@example.com", Groups: tc.groups}
		if got := c.Granted(id, tc.team); got != tc.grant {
			t.Errorf("groups %v, team %q: Granted = %v, want %v", tc.groups, tc.team, got, tc.grant)
		}
	}
}

// TestGrantHoldsAtUse: the drivers check, whenever they resolve a
// cluster's credential, that the grant it was chosen by still stands.
func TestGrantHoldsAtUse(t *testing.T) {
	parse := func(users string) *provider.CredentialSet {
		set, err := provider.ParseCredentials([]byte("credentials:\n  team: {type: azure, kind: default, scopes: ['*'], users: ["+users+"]}"), catalog.Profiles())
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	cluster := func(owner, team, grant string) *kpool.Cluster {
		return &kpool.Cluster{Name: "c", CreatedBy: owner, Team: team, Grant: grant, Spec: kpool.ClusterSpec{Credential: "team", Platform: kpool.ClusterPlatform{
			Type: kpool.PlatformAzure, Azure: &kpool.AzureCluster{SubscriptionID: "s", ResourceGroup: "rg", ClusterName: "c"}}}}
	}
	alice := &kpool.Identity{Email: "alice@example.com", Groups: []string{"ops", "platform:admin"}}
	for _, tc := range []struct {
		name, users, laterUsers, team string
		basis                         string
		holds                         bool
	}{
		{"by address, kept", "alice@example.com", "alice@example.com, carol@example.com", "", "alice@example.com", true},
		{"by address, taken away", "alice@example.com", "carol@example.com", "", "alice@example.com", false},
		{"by group, taken away", "'group:ops'", "'group:dev'", "", "group:ops", false},
		{"by team, kept", "'team:platform'", "'team:platform'", "platform", "team:platform", true},
		{"by team, taken away", "'team:platform'", "'team:data'", "platform", "team:platform", false},
		{"to everyone, then to alice", "'*'", "alice@example.com", "", "*", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := cluster(alice.Email, tc.team, "")
			basis, err := parse(tc.users).Grant(alice, tc.team, &cl.Spec)
			if err != nil || basis != tc.basis {
				t.Fatalf("Grant: %q, %v; want %q", basis, err, tc.basis)
			}
			cl.Grant = basis
			later := parse(tc.laterUsers)
			_, rerr := later.Resolve(cl)
			herr := later.Holds(cl)
			if (rerr == nil) != tc.holds || (herr == nil) != tc.holds {
				t.Fatalf("after the change: Resolve %v, Holds %v; want holds=%v", rerr, herr, tc.holds)
			}
			if !tc.holds && (!provider.IsValidation(rerr) || !strings.Contains(rerr.Error(), "spec.credential") || !strings.Contains(rerr.Error(), "no longer granted")) {
				t.Fatalf("Resolve's refusal: %v", rerr)
			}
		})
	}
	admin := &kpool.Identity{Email: "root@example.com", Admin: true}
	if basis, err := parse("carol@example.com").Grant(admin, "", &cluster(admin.Email, "", "").Spec); err != nil || basis != provider.GrantAdmin {
		t.Fatalf("an admin's grant: %q, %v", basis, err)
	}
}
