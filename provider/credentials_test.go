package provider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for _, tc := range []struct{ name, file, want string }{
		{"no credentials", `defaults: {}`, "none configured"},
		{"inline secret", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, secret: hunter2, scopes: ['*']}", "unknown field"},
		{"secret from nowhere", "credentials:\n  a: {type: azure, kind: client-secret, tenantId: t, clientId: c, scopes: ['*']}", "exactly one of secretEnv and secretFile"},
		{"no scopes", "credentials:\n  a: {type: azure, kind: default}", "credentials.a.scopes: required"},
		{"http endpoint", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], endpoints: ['http://arm.example']}", "credentials.a.endpoints"},
		{"endpoint with a path", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], endpoints: ['https://arm.example/x']}", "without a path"},
		{"platform without credentials", "credentials:\n  a: {type: k3s, kind: default, scopes: ['*']}", "takes no credentials"},
		{"unknown kind", "credentials:\n  a: {type: azure, kind: magic, scopes: ['*']}", "credentials.a.kind"},
		{"bad user", "credentials:\n  a: {type: azure, kind: default, scopes: ['*'], users: ['Alice <a@x.example>']}", "credentials.a.users"},
		{"bad name", "credentials:\n  A B: {type: azure, kind: default, scopes: ['*']}", "name must be"},
		{"default unknown", "defaults: {azure: b}\ncredentials:\n  a: {type: azure, kind: default, scopes: ['*']}", "defaults.azure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.ParseCredentials([]byte(tc.file), catalog.Profiles())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
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
