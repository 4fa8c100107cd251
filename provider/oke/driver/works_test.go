package driver_test

import (
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
)

// TestFailedWorkExplained: OKE explains a failed create through its work
// request's errors; the driver reports their code and message on the pool
// (and keeps them: a failed work request never changes), not only the
// pool's lifecycle state.
func TestFailedWorkExplained(t *testing.T) {
	e := newEmulated(t)
	e.CreateFailing(t, e.spec("f"))
	e.Clock.Advance(time.Hour)
	find := func() provider.Pool {
		pools, err := e.Driver.NodePoolList(ctx, e.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pools {
			if p.ProviderName == "f" {
				return p
			}
		}
		t.Fatal("the failed pool is not listed")
		return provider.Pool{}
	}
	p := find()
	if p.State != provider.StateFailed || !strings.Contains(p.Message, "InternalError: Launching the node pool's instances failed") || p.Extra["failedWorkRequest"] == "" {
		t.Fatalf("failed pool: %s %q %v", p.State, p.Message, p.Extra)
	}
	errorReads := func() (n int) {
		for _, c := range e.Sim.Calls() {
			if strings.HasSuffix(c.Path, "/errors") {
				n++
			}
		}
		return n
	}
	before := errorReads()
	if again := find(); again.Message != p.Message || errorReads() != before {
		t.Fatalf("a second list read the errors again (%d reads) or says %q", errorReads()-before, again.Message)
	}
}

// TestServiceAnswers: what OKE answers for a resource named in the body
// (400 RelatedResourceNotAuthorizedOrNotFound) and for its service limits
// (400 LimitExceeded), and what the driver makes of it: a cluster that is
// gone is not found, a subnet that is gone refuses the zones, and a limit
// is a quota (tried again later), never a refused spec.
func TestServiceAnswers(t *testing.T) {
	setup := setup
	setup.Emulator = func(o sim.Options) *okesim.Server {
		emu := okesim.New(okesim.Options{Engine: o, Keys: map[string]*rsa.PublicKey{okesim.KeyID(tenancy, user, &key.PublicKey): &key.PublicKey},
			Limits: okesim.Limits{NodePoolsPerCluster: 1, NodesPerPool: 3}})
		emu.AddCluster(okesim.Cluster{ID: clusterID, Name: "prod", Region: region, CompartmentID: compartment, Version: "v1.31.1", ImageID: image, Subnets: subnets})
		return emu
	}
	e := &emulated{setup.Start(t)}
	var pe *provider.Error
	s := e.spec("a")
	s.Version = "1.31.1" // no GetNodePoolOptions: the create's body names the cluster
	missing := clusterAt(e.Cluster.Spec.Endpoint)
	missing.Spec.Platform.OCI.ClusterID = "ocid1.cluster.oc1.phx.gone"
	if _, err := e.Driver.NodePoolCreate(ctx, missing, s); !provider.IsNotFound(err) {
		t.Fatalf("a create in a cluster that is gone: %v", err)
	}
	badSubnet := clusterAt(e.Cluster.Spec.Endpoint)
	badSubnet.Spec.Platform.OCI.Subnets = map[string]string{"Uocm:PHX-AD-1": "ocid1.subnet.oc1.phx.gone", "Uocm:PHX-AD-2": subnets["Uocm:PHX-AD-2"],
		"Uocm:PHX-AD-3": subnets["Uocm:PHX-AD-3"]}
	if _, err := e.Driver.NodePoolCreate(ctx, badSubnet, e.spec("a", "1")); !errors.As(err, &pe) || pe.Kind != provider.KindValidation || pe.Field != "spec.zones" {
		t.Fatalf("a create in a subnet that is gone: %v", err)
	}
	big := e.spec("a")
	big.Count = 4
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, big); !errors.As(err, &pe) || pe.Kind != provider.KindQuota || pe.Field != "spec.nodeCount" {
		t.Fatalf("over the nodes per pool: %v", err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Driver.NodePoolCreate(ctx, e.Cluster, e.spec("b")); !errors.As(err, &pe) || pe.Kind != provider.KindQuota || pe.Field != "" {
		t.Fatalf("over the node pools per cluster: %v", err)
	}
}
