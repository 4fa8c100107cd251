package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool/api"
)

func TestVersionCmd(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	notKpool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html>nginx</html>"))
	}))
	t.Cleanup(notKpool.Close)
	me := api.BuildVersion()
	tests := []struct {
		name    string
		args    []string
		wantErr string
		want    func(out string) bool
	}{
		{"client only", []string{"--server="}, "", func(out string) bool {
			return strings.HasPrefix(out, "Client:   "+me.Version+"   commit ") && strings.Contains(out, me.Go) && !strings.Contains(out, "Server:")
		}},
		{"client and server", []string{"--server", srv}, "", func(out string) bool {
			return strings.Contains(out, "Client:") && strings.Contains(out, "\nServer:   "+me.Version) && strings.Contains(out, "("+srv+")")
		}},
		{"json", []string{"--server", srv, "-o", "json"}, "", func(out string) bool {
			var v versions
			return json.Unmarshal([]byte(out), &v) == nil && v.Client == me && v.Server != nil && *v.Server == me
		}},
		{"yaml, client only", []string{"--server=", "-o", "yaml"}, "", func(out string) bool {
			return strings.HasPrefix(out, "client:\n") && !strings.Contains(out, "server:")
		}},
		{"a server that is not kpool: the client's still shown", []string{"--server", notKpool.URL}, "the server's version (" + notKpool.URL + "/version)",
			func(out string) bool { return strings.HasPrefix(out, "Client:") }},
		{"not a URL", []string{"--server", "kpool.example.com"}, "is not a URL", func(out string) bool { return out == "" }},
		{"bad output", []string{"--server=", "-o", "wide"}, "is not a format", func(out string) bool { return out == "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := execute("", append([]string{"version"}, tt.args...)...)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if !tt.want(out) {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}
