package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/service"
)

// TestCompleteValues: flags that take one of a few words complete them,
// never file names; -o's template formats add no space; --zones completes
// the cluster's zones as kpool learnt them; get and delete complete more
// than one name.
func TestCompleteValues(t *testing.T) {
	t.Parallel()
	srv, web := serverWithFacts(t)
	as := []string{"--server", srv, "--user", testUser}
	const noFiles, noSpace = ":4", ":6"
	tests := []struct {
		name      string
		args      []string
		want      []string
		directive string
	}{
		{"-o", []string{"nodepool", "list", "-o", ""}, outputs, noFiles},
		{"-o js", []string{"nodepool", "get", "web", "-o", "js"}, []string{"json", "jsonpath="}, noFiles},
		{"-o jsonp: no space after =", []string{"cluster", "list", "-o", "jsonp"}, []string{"jsonpath="}, noSpace},
		{"-o c", []string{"events", "-o", "c"}, []string{"custom-columns="}, noSpace},
		{"version -o", []string{"version", "-o", ""}, []string{"table", "json", "yaml"}, noFiles},
		{"config view -o", []string{"config", "view", "-o", ""}, []string{"yaml", "json"}, noFiles},
		{"--mode", []string{"nodepool", "create", "x", "--mode", ""}, []string{"system", "user"}, noFiles},
		{"--mode on update", []string{"nodepool", "update", "web", "--mode", "s"}, []string{"system"}, noFiles},
		{"--platform", []string{"cluster", "create", "x", "--platform", "a"}, []string{"azure", "aws"}, noFiles},
		{"--replacement", []string{"nodepool", "update", "web", "--replacement", ""}, []string{"Refuse", "Surge"}, noFiles},
		{"--on-stuck", []string{"nodepool", "create", "x", "--on-stuck", ""}, []string{"Stop", "Wait", "Force"}, noFiles},
		{"--status", []string{"nodepool", "list", "--status", "P"}, []string{"Pending", "Provisioning"}, noFiles},
		{"--health", []string{"nodepool", "list", "--health", ""}, []string{"healthy", "unhealthy", "unknown"}, noFiles},
		{"--role", []string{"token", "create", "--role", ""}, []string{"user", "admin", "controller"}, noFiles},
		{"--log-format", []string{"serve", "--log-format", ""}, []string{"text", "json"}, noFiles},
		{"--zones of --cluster", append(append([]string{"nodepool", "create", "x", "--cluster", "prod"}, as...), "--zones", ""), []string{"1", "2", "3"}, noSpace},
		{"--zones, the next one", append(append([]string{"nodepool", "update", "web", "--cluster", "prod"}, as...), "--zones", "1,"), []string{"1,2", "1,3"}, noSpace},
		{"--zones without a cluster: no files", append(append([]string{"nodepool", "create", "x"}, as...), "--zones", ""), nil, noFiles},
		{"--zones of an unlearnt cluster", append(append([]string{"lp", "create", "x", "--cluster", "stage"}, as...), "--zones", ""), nil, noFiles},
		{"get: a second name", append([]string{"nodepool", "get", "--cluster", "prod", "web"}, append(as, "")...), []string{"web", web}, noFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive, _ := complete(tt.args...)
			if !slices.Equal(got, tt.want) || directive != tt.directive {
				t.Errorf("completions %q %s, want %q %s", got, directive, tt.want, tt.directive)
			}
		})
	}
}

// serverWithFacts is a server with the clusters prod (whose zones 1-3 a
// controller reported) and stage (nothing learnt), and prod's pool web
// (its ID returned).
func serverWithFacts(t *testing.T) (string, string) {
	t.Helper()
	svc := newService(t, catalog.Registry())
	url := serveAPI(t, svc)
	user := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: testUser})
	var id string
	for _, name := range []string{"prod", "stage"} {
		c, err := svc.CreateCluster(user, service.ClusterCreate{Name: name,
			Spec: json.RawMessage(`{"platform":{"type":"gcp","gcp":{"projectId":"acme-` + name + `","location":"us-central1","clusterName":"` + name + `"}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		if name == "prod" {
			id = c.ID
		}
	}
	ctl := kpool.WithIdentity(context.Background(), &kpool.Identity{Email: testController, Controller: true})
	if err := svc.ReportClusterFacts(ctl, id, &kpool.ClusterFacts{LearnedAt: time.Now(), Zones: []string{"1", "2", "3"}}); err != nil {
		t.Fatal(err)
	}
	web := createPool(t, url, "web", "prod", "--machine-type", "e2-small")
	if !strings.HasPrefix(web.ClusterID, id[:8]) {
		t.Fatalf("web in %s, not prod", web.ClusterID)
	}
	return url, web.ID
}
