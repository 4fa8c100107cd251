package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestApplyEnv: a variable sets its flag when the command line does not,
// before the nearest persistent pre-run hook runs, without marking the
// flag given; an empty variable is unset; a value the flag does not take
// is an error that names the variable.
func TestApplyEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		token   string
		wait    time.Duration
		wantErr string
	}{
		{"defaults", nil, nil, "", time.Minute, ""},
		{"from the environment", map[string]string{"KPOOL_T_TOKEN": "env-token", "KPOOL_T_WAIT": "5s"}, nil, "env-token", 5 * time.Second, ""},
		{"flags beat it", map[string]string{"KPOOL_T_TOKEN": "env-token", "KPOOL_T_WAIT": "5s"},
			[]string{"--token", "flag-token", "--wait", "7s"}, "flag-token", 7 * time.Second, ""},
		{"empty is unset", map[string]string{"KPOOL_T_TOKEN": "", "KPOOL_T_WAIT": ""}, nil, "", time.Minute, ""},
		{"not a duration", map[string]string{"KPOOL_T_WAIT": "soon"}, nil, "", 0,
			`KPOOL_T_WAIT "soon": not a duration such as 1m or 30s (as --wait takes)`},
		{"a bad value, flag given", map[string]string{"KPOOL_T_WAIT": "soon"}, []string{"--wait", "2s"}, "", 2 * time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"KPOOL_T_TOKEN", "KPOOL_T_WAIT"} {
				t.Setenv(v, tc.env[v])
			}
			var token, atHook string
			var wait time.Duration
			var changed bool
			root := &cobra.Command{Use: "t", SilenceErrors: true, SilenceUsage: true}
			group := &cobra.Command{Use: "group", PersistentPreRunE: func(*cobra.Command, []string) error { atHook = token; return nil }}
			leaf := &cobra.Command{Use: "leaf", RunE: func(c *cobra.Command, _ []string) error {
				changed = c.Flags().Changed("token")
				return nil
			}}
			group.PersistentFlags().StringVar(&token, "token", "", "a token (KPOOL_T_TOKEN)")
			leaf.Flags().DurationVar(&wait, "wait", time.Minute, "how long (KPOOL_T_WAIT)")
			bindEnv(group.PersistentFlags(), map[string]string{"token": "KPOOL_T_TOKEN"})
			bindEnv(leaf.Flags(), map[string]string{"wait": "KPOOL_T_WAIT"})
			group.AddCommand(leaf)
			root.AddCommand(group)
			readEnvFirst(root)
			root.SetArgs(append([]string{"group", "leaf"}, tc.args...))
			err := root.Execute()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || token != tc.token || wait != tc.wait || atHook != tc.token {
				t.Fatalf("err %v, token %q (at the hook %q), wait %s; want %q, %s", err, token, atHook, wait, tc.token, tc.wait)
			}
			if changed != slices.Contains(tc.args, "--token") {
				t.Errorf("--token changed: %v", changed)
			}
		})
	}
}

// TestCredentialPrecedence: the token and e-mail address a client command
// sends come from its flags, then the environment, then the context, as
// README says; a user given anywhere but the context keeps the context's
// token unsent.
func TestCredentialPrecedence(t *testing.T) {
	var mu sync.Mutex
	var authz, email string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		authz, email = r.Header.Get("Authorization"), r.Header.Get("X-User-Email")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"UNAUTHORIZED","message":"Unauthorized"}}`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("context-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("current-context: c\ncontexts:\n  c:\n    server: "+srv.URL+"\n    token-file: "+tokenFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPOOL_CONFIG", cfg)
	for _, tc := range []struct {
		name        string
		env         map[string]string
		args        []string
		authz, user string
	}{
		{"the context", nil, nil, "Bearer context-token", ""},
		{"the environment beats the context", map[string]string{"KPOOL_TOKEN": "env-token"}, nil, "Bearer env-token", ""},
		{"a flag beats the environment", map[string]string{"KPOOL_TOKEN": "env-token"}, []string{"--token", "flag-token"}, "Bearer flag-token", ""},
		{"KPOOL_USER: no context token", map[string]string{"KPOOL_USER": "a@example.com"}, nil, "", "a@example.com"},
		{"--user beats KPOOL_USER", map[string]string{"KPOOL_USER": "a@example.com"}, []string{"--user", "b@example.com"}, "", "b@example.com"},
		{"KPOOL_SERVER beats the context's", map[string]string{"KPOOL_SERVER": "http://" + closedAddr(t)}, nil, "-", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"KPOOL_TOKEN", "KPOOL_USER", "KPOOL_SERVER", "KPOOL_CONTEXT"} {
				t.Setenv(v, tc.env[v])
			}
			mu.Lock()
			authz, email = "-", "-"
			mu.Unlock()
			_, _, err := execute("", append([]string{"cluster", "list"}, tc.args...)...)
			mu.Lock()
			defer mu.Unlock()
			if tc.authz == "-" {
				if err == nil || !strings.Contains(err.Error(), "connection refused") || authz != "-" {
					t.Fatalf("the context's server was asked (%q): %v", authz, err)
				}
				return
			}
			if authz != tc.authz || email != tc.user {
				t.Errorf("sent Authorization %q, X-User-Email %q; want %q, %q (%v)", authz, email, tc.authz, tc.user, err)
			}
		})
	}
}
