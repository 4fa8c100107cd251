package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpool/kpool"
)

// TestServeCloudFlags: --allowed-endpoints and --credentials are read once
// and refused at start when wrong.
func TestServeCloudFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("defaults: {azure: prod}\ncredentials:\n  prod: {type: azure, kind: default, scopes: ['*'], users: ['*']}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("credentials:\n  prod: {type: azure, kind: default}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, allowed, creds, want string
	}{
		{"no flags", "", "", ""},
		{"allowed endpoints", "https://arm.example, https://127.0.0.1:8443", "", ""},
		{"credentials file", "", good, ""},
		{"http endpoint", "http://arm.example", "", "--allowed-endpoints"},
		{"bad file", "", bad, "--credentials"},
		{"missing file", "", filepath.Join(dir, "none.yaml"), "--credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := serveFlags{allowedEndpoints: tc.allowed, credentials: tc.creds}
			c, err := f.cloud()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want an error about %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := f.cloud(); again != c {
				t.Fatal("read twice")
			}
			if tc.allowed != "" && !c.endpoints.Allows("https://arm.example") {
				t.Fatal("allowed endpoint not allowed")
			}
			// Without a file, the default credential goes to public ARM
			// and the allowed endpoints; with one, where the file says.
			cl := &kpool.Cluster{Spec: kpool.ClusterSpec{Endpoint: "https://arm.example"}}
			cl.Spec.Platform.Type = "azure"
			cl.Spec.Platform.Azure = &kpool.AzureCluster{SubscriptionID: "s"}
			_, err = c.creds.Resolve(cl)
			if wantOK := tc.allowed != ""; (err == nil) != wantOK {
				t.Fatalf("resolve at an allowed endpoint: %v", err)
			}
		})
	}
}
