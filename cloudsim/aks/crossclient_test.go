package aks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/internal/crossclient"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestJavaScriptClient: Microsoft's own Node.js client
// (@azure/arm-containerservice, pointed at the emulator by its endpoint
// option, with a fixed-token credential), which kpool did not write,
// creates an agent pool with an empty orchestratorVersion (as Microsoft's
// examples do), reads, lists, updates, stops, starts, reimages and deletes
// it on the demo cluster, following each operation, reads the upgrade
// profile and versions, and gets AKS's refusals of an unoffered VM size and
// zone as its RestError (status, code, message).
func TestJavaScriptClient(t *testing.T) {
	emu, err := aks.Demo(sim.Options{OperationTime: 20 * time.Millisecond, NodeTime: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ep, caPEM, err := sim.TLSServer(emu, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	ca := crossclient.CAFile(t, caPEM)
	out := string(crossclient.Node(t, "aks.mjs", "NODE_EXTRA_CA_CERTS="+ca, "ENDPOINT="+ep.URL, "SUBSCRIPTION="+aks.DemoSubscription,
		"RESOURCE_GROUP="+aks.DemoResourceGroup, "CLUSTER="+aks.DemoCluster, "TOKEN=any-token"))
	for _, want := range []string{
		`{"step":"create","status":"running"}`,
		`{"step":"created","provisioningState":"Succeeded","orchestratorVersion":"` + aks.DemoVersion + `"}`,
		`{"step":"get","vmSize":"Standard_D4s_v5","count":1,"mode":"User","taints":["dedicated=js:NoSchedule"],"powerState":"Running"}`,
		`{"step":"list","names":["jsclient","nodepool1"]}`,
		`{"step":"update","provisioningState":"Succeeded","count":2,"labels":{"team":"js","tier":"batch"},"taints":["dedicated=batch:NoExecute"]}`,
		`{"step":"stop","provisioningState":"Succeeded","powerState":"Stopped","count":2}`,
		`{"step":"start","provisioningState":"Succeeded","powerState":"Running"}`,
		`{"step":"nodeImage","provisioningState":"Succeeded","ubuntu":true}`,
		`{"step":"versions","kubernetesVersion":"` + aks.DemoVersion + `","default":"` + aks.DemoVersion + `"}`,
		`{"step":"sizeRefused","status":400,"code":"BadRequest","message":"The VM size of AgentPoolProfile:refused is not allowed in your subscription in location 'westeurope'.`,
		`{"step":"zoneRefused","status":400,"code":"AvailabilityZoneNotSupported","message":"The zone(s) '3' for resource 'refused' is not supported.`,
		`{"step":"delete","names":["nodepool1"]}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	if st, ok := emu.Pool(aks.DemoSubscription, aks.DemoResourceGroup, aks.DemoCluster, "jsclient"); ok {
		t.Errorf("jsclient still exists: %+v", st)
	}
	// Every request went to the emulator with the client's api-version.
	for _, c := range emu.Calls() {
		if !strings.Contains(c.Query, "api-version=") {
			t.Errorf("a call without api-version: %+v", c)
		}
	}
}

// TestDescribe: kpool cloudsim tells an outside client what it needs: the
// endpoint, the demo cluster's subscription, resource group and name, that
// any bearer token is accepted, how to point the Go and Node.js SDKs at
// the emulator, and where the cluster's Kubernetes API is.
func TestDescribe(t *testing.T) {
	emu, err := aks.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	emu.Describe(&b, "https://127.0.0.1:8443")
	for _, want := range []string{"any bearer token", "subscription:   " + aks.DemoSubscription, "resource group: " + aks.DemoResourceGroup,
		"AKS cluster " + aks.DemoCluster, "nodepool1 (System)", `Endpoint: "https://127.0.0.1:8443"`, `{endpoint: "https://127.0.0.1:8443"}`,
		"https://127.0.0.1:8443/subscriptions/" + aks.DemoSubscription + "/resourceGroups/" + aks.DemoResourceGroup,
		"VM sizes:       https://127.0.0.1:8443/subscriptions/" + aks.DemoSubscription + "/providers/Microsoft.Compute/skus?api-version=2021-07-01&$filter=location eq 'westeurope'",
		"Kubernetes API: https://127.0.0.1:8443/k8s/" + emu.KubeID(aks.DemoSubscription, aks.DemoResourceGroup, aks.DemoCluster), "listClusterUserCredential"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
