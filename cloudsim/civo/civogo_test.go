package civo_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/civo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The clusters, pool and key of civogo's own tests (v0.7.0, commit
// 571ecb5): NewClientForTestingWithServer makes a client with the key
// TEST-API-KEY in the region TEST, and the tests name these ids.
const (
	fxKey     = "TEST-API-KEY"
	fxRegion  = "TEST"
	fxCluster = "e733ea47-cc80-443b-b3f2-cccfe7a61ef5" // pool_test.go
	fxPool    = "fad8638d-efac-41e0-8787-23d37d845685" // pool_test.go
	fxOther   = "69a23478-a89e-41d2-97b1-6f4c341cee70" // kubernetes_test.go
)

// civogoCall is one call of civogo's tests: the request civogo sends (its
// method, path, query and JSON body, as its client builds them), and the
// shape of the answer the test records as Civo's: the same member names,
// with values of the same JSON types (the values are ours).
type civogoCall struct {
	source                    string // civogo's file and test
	method, path, query, body string
	shape                     string
}

// instanceShape is a pool's instance as TestGetKubernetesPool and
// TestUpdateKubernetesPool record it.
const instanceShape = `{"id":"s","name":"s","hostname":"s","account_id":"s","size":"s","firewall_id":"s","source_type":"s","source_id":"s",
"network_id":"s","initial_user":"s","initial_password":"s","ssh_key":"s","tags":["s"],"script":"s","status":"s","civostatsd_token":"s",
"public_ip":"s","private_ip":"s","namespace_id":"s","notes":"s","reverse_dns":"s","cpu_cores":1,"ram_mb":1,"disk_gb":1,"created_at":"s"}`

// clusterShape is a cluster as TestListKubernetesClusters records it (and
// TestGetKubernetesClusters, less required_pools and volume_type). Its
// installed_applications are not emulated: an empty list is checked as a
// list only.
const clusterShape = `{"id":"s","name":"s","version":"s","status":"s","ready":true,"num_target_nodes":1,"target_nodes_size":"s",
"built_at":"s","kubeconfig":"s","kubernetes_version":"s","api_endpoint":"s","master_ip":"s","dns_entry":"s","tags":[],"created_at":"s",
"firewall_id":"s","instances":[{"hostname":"s","size":"s","region":"s","created_at":"s","status":"s","firewall_id":"s","public_ip":"s",
"tags":["s"]}],"required_pools":[{"id":"s","size":"s","count":1}],"installed_applications":[{"application":"s"}],"cni_plugin":"s",
"ccm_installed":"s","volume_type":"s"}`

// civogoCalls are the calls, in an order that works on one emulator:
// each needs what the ones before it made.
var civogoCalls = []civogoCall{
	{source: "pool_test.go TestCreateKubernetesClusterPool (CreateKubernetesClusterPool puts the client's region in the body)",
		method: "POST", path: "/v2/kubernetes/clusters/" + fxCluster + "/pools", query: "region=TEST",
		body:  `{"region":"TEST","id":"8a849cc5-bd51-45ce-814a-c378b09dcb06","count":3,"size":"g4s.kube.small","taints":[]}`,
		shape: `{"result":"s"}`},
	{source: "pool_test.go TestGetKubernetesPool", method: "GET", path: "/v2/kubernetes/clusters/" + fxCluster + "/pools/" + fxPool, query: "region=TEST",
		shape: `{"id":"s","size":"s","count":1,"instance_names":["s"],"instances":[` + instanceShape + `]}`},
	{source: "pool_test.go TestUpdateKubernetesPool (KubernetesClusterPoolUpdateConfig: no id, size or region given)",
		method: "PUT", path: "/v2/kubernetes/clusters/" + fxCluster + "/pools/" + fxPool, query: "region=TEST",
		body:  `{"count":3,"labels":{"label1":"label"},"taints":[{"key":"app","value":"frontend","effect":"NoSchedule"}]}`,
		shape: `{"id":"s","size":"s","count":1,"instance_names":["s"],"labels":{},"taints":[{"key":"s","value":"s","effect":"s"}],"instances":[` + instanceShape + `]}`},
	{source: "pool_test.go TestDeleteKubernetesPoolInstance (the instance id is the emulator's: Civo makes instance ids)",
		method: "DELETE", path: "/v2/kubernetes/clusters/" + fxCluster + "/pools/" + fxPool + "/instances/{instance}", query: "region=TEST",
		shape: `{"result":"s"}`},
	{source: "pool_test.go TestDeleteKubernetesPool", method: "DELETE", path: "/v2/kubernetes/clusters/" + fxCluster + "/pools/" + fxPool,
		query: "region=TEST", shape: `{"result":"s"}`},
	{source: "kubernetes_test.go TestGetKubernetesClusters", method: "GET", path: "/v2/kubernetes/clusters/" + fxOther, query: "region=TEST",
		shape: clusterShape},
	{source: "kubernetes_test.go TestListKubernetesClusters", method: "GET", path: "/v2/kubernetes/clusters", query: "region=TEST",
		shape: `{"page":1,"per_page":1,"pages":1,"items":[` + clusterShape + `]}`},
	{source: "region_test.go TestListRegions", method: "GET", path: "/v2/regions", query: "region=TEST",
		shape: `[{"code":"s","name":"s","type":"s","out_of_capacity":false,"country":"s","country_name":"s","features":{"iaas":false,"kubernetes":true}},` +
			`{"code":"s","name":"s","default":true,"type":"s","out_of_capacity":true,"country":"s","country_name":"s","features":{"iaas":true,"kubernetes":true}}]`},
	{source: "instance_size_test.go TestListInstanceSizes", method: "GET", path: "/v2/sizes", query: "region=TEST",
		shape: `[{"type":"s","name":"s","nice_name":"s","cpu_cores":1,"gpu_count":0,"gpu_type":"","ram_mb":1,"disk_gb":1,"transfer_tb":1,` +
			`"description":"s","selectable":true}]`},
	{source: "kubernetes_test.go TestListAvailableKubernetesVersions", method: "GET", path: "/v2/kubernetes/versions", query: "region=TEST",
		shape: `[{"version":"s","type":"s","default":true},{"version":"s","type":"s"}]`},
	{source: "quota_test.go TestGetQuota", method: "GET", path: "/v2/quota", query: "region=TEST", shape: quotaShape},
}

// quotaShape is the account's quota as TestGetQuota records it.
var quotaShape = func() string {
	var b strings.Builder
	b.WriteString(`{"id":"s","default_user_id":"s","default_user_email_address":"s"`)
	for _, q := range []string{"instance_count", "cpu_core", "ram_mb", "disk_gb", "disk_volume_count", "disk_snapshot_count", "public_ip_address",
		"subnet_count", "network_count", "security_group", "security_group_rule", "port_count", "loadbalancer_count", "objectstore_gb",
		"database_count", "database_snapshot_count", "database_cpu_core", "database_ram_mb", "database_disk_gb"} {
		fmt.Fprintf(&b, `,"%s_limit":1,"%s_usage":1`, q, q)
	}
	return b.String() + "}"
}()

// TestCivogoFixtures replays the requests civogo's own tests send, as
// civogo sends them (its headers included: a JSON Content-Type and a
// "Content-Encoding: gzip" over a body that is not compressed), against
// the emulator, and checks that each answer is a success of the shape the
// test records: every member it records, of the same JSON type.
func TestCivogoFixtures(t *testing.T) {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	emu := civo.New(civo.Options{Engine: sim.Options{Clock: clock}, Keys: []string{fxKey}})
	emu.AddCluster(civo.Cluster{ID: fxCluster, Name: "second-cluster", Region: fxRegion, Version: "1.26.4-k3s1"})
	emu.AddCluster(civo.Cluster{ID: fxOther, Name: "your-cluster-name", Region: fxRegion, Version: "1.26.4-k3s1"})
	for cl, id := range map[string]string{fxCluster: fxPool, fxOther: "pool-1"} {
		if st, _ := send(emu, "POST", "/v2/kubernetes/clusters/"+cl+"/pools", "region=TEST", `{"id":"`+id+`","count":1,"size":"g4s.kube.small"}`); st != 200 {
			t.Fatalf("setting up pool %s: %d", id, st)
		}
	}
	for _, c := range civogoCalls {
		t.Run(c.source, func(t *testing.T) {
			clock.Advance(time.Hour) // what the last call started is done
			path := c.path
			if strings.Contains(path, "{instance}") {
				path = strings.ReplaceAll(path, "{instance}", firstInstance(t, emu))
			}
			status, body := send(emu, c.method, path, c.query, c.body)
			if status < 200 || status > 299 {
				t.Fatalf("%s %s?%s: %d %s", c.method, path, c.query, status, body)
			}
			var recorded, got any
			if err := json.Unmarshal([]byte(c.shape), &recorded); err != nil {
				t.Fatalf("the case's shape: %v", err)
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			if diffs := shapeDiffs("", recorded, got); len(diffs) > 0 {
				t.Fatalf("the answer differs from civogo's recorded one:\n  %s\nanswer: %s", strings.Join(diffs, "\n  "), body)
			}
		})
	}
}

// send sends a request as civogo's client does (client.go sendRequest).
func send(emu http.Handler, method, path, query, body string) (int, []byte) {
	req := httptest.NewRequest(method, path+"?"+query, strings.NewReader(body))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "civogo/0.7.0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "bearer "+fxKey)
	rec := httptest.NewRecorder()
	emu.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// firstInstance is the id of the first node of civogo's pool.
func firstInstance(t *testing.T, emu http.Handler) string {
	t.Helper()
	_, body := send(emu, "GET", "/v2/kubernetes/clusters/"+fxCluster+"/pools/"+fxPool, "region=TEST", "")
	var p civo.Pool
	if err := json.Unmarshal(body, &p); err != nil || len(p.Instances) == 0 {
		t.Fatalf("the pool's nodes: %s (%v)", body, err)
	}
	return p.Instances[0].ID
}

// shapeDiffs lists where got lacks a member of recorded, or has it with
// another JSON type. A recorded null takes any type; the elements of a
// list are checked when both lists have some (each recorded element
// against ours at its index, or our last).
func shapeDiffs(at string, recorded, got any) []string {
	switch r := recorded.(type) {
	case nil:
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an object, got %T", at, got)}
		}
		var out []string
		for k, rv := range r {
			gv, has := g[k]
			if !has {
				out = append(out, fmt.Sprintf("%s.%s: missing", at, k))
				continue
			}
			out = append(out, shapeDiffs(at+"."+k, rv, gv)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: a list, got %T", at, got)}
		}
		var out []string
		for i, rv := range r {
			if len(g) == 0 {
				break
			}
			out = append(out, shapeDiffs(fmt.Sprintf("%s[%d]", at, i), rv, g[min(i, len(g)-1)])...)
		}
		return out
	}
	if fmt.Sprintf("%T", recorded) != fmt.Sprintf("%T", got) {
		return []string{fmt.Sprintf("%s: %T, got %T", at, recorded, got)}
	}
	return nil
}
