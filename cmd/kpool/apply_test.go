package main

import (
	"testing"
)

func TestApplySmoke(t *testing.T) {
	srv := newServer(t)
	cl := createCluster(t, srv, "prod", "gcp")
	createPool(t, srv, "web", cl, "--machine-type", "e2-small", "--count", "2")
	f := writeFile(t, "pools.yaml", `
name: web
cluster: prod
spec:
  nodeCount: 3
  platform:
    gcp:
      machineType: e2-small
---
# comment only
---
name: batch
cluster_id: `+cl+`
spec:
  nodeCount: 1
  platform:
    gcp:
      machineType: e2-medium
---
name: bad
cluster: nope
spec: {}
`)
	for _, args := range [][]string{{"apply", "-f", f, "--dry-run"}, {"diff", "-f", f}, {"apply", "-f", f}, {"apply", "-f", f, "--dry-run"}, {"diff", "-f", f}} {
		out, stderr, err := execute("", append(args, "--server", srv, "--user", testUser)...)
		t.Logf("%v\n%s---stderr\n%s---err %v", args, out, stderr, err)
	}
}
