package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConfigView: config view shows the contexts (a token file by its
// path, never the token), --minify the current one; --version prints what
// kpool version does; context names complete.
func TestConfigView(t *testing.T) {
	t.Setenv("KPOOL_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	t.Setenv("KPOOL_CONTEXT", "")
	tokenFile := writeFile(t, "prod.token", "kpool_s3cr3t-token-value\n")
	for _, args := range [][]string{
		{"config", "set-context", "prod", "--server", "https://kpool.example.com", "--token-file", tokenFile, "--cluster", "prod-aks"},
		{"config", "set-context", "dev", "--server", "http://127.0.0.1:8080", "--user", "me@example.com"},
	} {
		if _, _, err := execute("", args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	tests := []struct {
		args     []string
		contexts []string // the contexts shown
		want     []string
		err      string
	}{
		{[]string{"config", "view"}, []string{"dev", "prod"}, []string{"current-context: prod", "token-file: " + tokenFile, "cluster: prod-aks", "user: me@example.com"}, ""},
		{[]string{"config", "view", "-o", "json"}, []string{"dev", "prod"}, []string{`"token-file": "` + tokenFile + `"`}, ""},
		{[]string{"config", "view", "--minify", "-o", "json"}, []string{"prod"}, []string{`"current-context": "prod"`}, ""},
		{[]string{"config", "view", "-o", "wide"}, nil, nil, `--output "wide" is not a format of config view: use yaml or json`},
	}
	for _, tt := range tests {
		out, _, err := execute("", tt.args...)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("%v shows the token:\n%s", tt.args, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", tt.args, w, out)
			}
		}
		if slices.Contains(tt.args, "json") {
			var cfg config
			if err := json.Unmarshal([]byte(out), &cfg); err != nil {
				t.Fatalf("%v: %v", tt.args, err)
			}
			var names []string
			for n := range cfg.Contexts {
				names = append(names, n)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.contexts) {
				t.Errorf("%v: contexts %v, want %v", tt.args, names, tt.contexts)
			}
		}
	}

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"config", "use-context", ""}, []string{"dev", "prod"}},
		{[]string{"config", "delete-context", "p"}, []string{"prod"}},
		{[]string{"nodepool", "list", "--context", "d"}, []string{"dev"}},
		{[]string{"config", "use-context", "dev", ""}, nil},
	} {
		if got, directive, _ := complete(tt.args...); !slices.Equal(got, tt.want) || directive != ":4" {
			t.Errorf("complete %v: %q %s, want %q :4", tt.args, got, directive, tt.want)
		}
	}

	version, _, err := execute("", "version")
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := execute("", "--version"); err != nil || out != version || !strings.HasPrefix(out, "Client:") {
		t.Errorf("--version: %q %v, want %q", out, err, version)
	}
}
