package oke

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/internal/demo"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The demo cluster Demo holds: where it is, and what its nodes run.
const (
	DemoCluster     = "demo-oke"
	DemoClusterID   = "ocid1.cluster.oc1.iad.aaaaaaaakpoolcloudsimdemooke"
	DemoCompartment = "ocid1.compartment.oc1..aaaaaaaakpoolcloudsimdemo"
	DemoRegion      = "us-ashburn-1"
)
const (
	DemoVersion = "v1.31.1"
	DemoImage   = "ocid1.image.oc1.iad.aaaaaaaakpoolcloudsimoracle8oke"
)

// The tenancy and user of the demo signing key (DemoConfigProvider).
const (
	DemoTenancy = "ocid1.tenancy.oc1..aaaaaaaakpoolcloudsimdemotenancy"
	DemoUser    = "ocid1.user.oc1..aaaaaaaakpoolcloudsimdemouser"
)

// DemoSubnets are the demo cluster's worker subnets by availability domain.
var DemoSubnets = map[string]string{
	"Uocm:US-ASHBURN-AD-1": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad1",
	"Uocm:US-ASHBURN-AD-2": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad2",
	"Uocm:US-ASHBURN-AD-3": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad3",
}

// demoKey is the demo signing key (DemoPrivateKeyPEM) and its fingerprint.
var demoKey = sync.OnceValues(func() (*rsa.PrivateKey, string) {
	b, _ := pem.Decode([]byte(DemoPrivateKeyPEM))
	if b == nil {
		panic("oke: DemoPrivateKeyPEM is not PEM")
	}
	k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	if err != nil {
		panic(err)
	}
	return k, Fingerprint(&k.PublicKey)
})

// DemoFingerprint is the demo signing key's fingerprint, as OCI shows an
// API key's.
func DemoFingerprint() string {
	_, fp := demoKey()
	return fp
}

// Identity returns OKE and the demo signing key (DemoConfigProvider).
func (s *Server) Identity() (kpool.PlatformType, any) { return kpool.PlatformOCI, DemoConfigProvider() }

// DemoConfigProvider is the demo signing key as an OCI configuration
// provider, for a driver that talks to the demo emulator.
func DemoConfigProvider() common.ConfigurationProvider {
	return common.NewRawConfigurationProvider(DemoTenancy, DemoUser, DemoRegion, DemoFingerprint(), DemoPrivateKeyPEM, nil)
}

// Demo returns an emulator on an engine with options o that holds the
// demo cluster and its pool "pool1", accepting requests signed with the
// demo key.
func Demo(o sim.Options) (*Server, error) {
	k, _ := demoKey()
	s := New(Options{Engine: o, Keys: map[string]*rsa.PublicKey{KeyID(DemoTenancy, DemoUser, &k.PublicKey): &k.PublicKey}})
	s.AddCluster(Cluster{ID: DemoClusterID, Name: DemoCluster, Region: DemoRegion, CompartmentID: DemoCompartment, Version: DemoVersion,
		ImageID: DemoImage, Subnets: DemoSubnets})
	s.AddPool(DemoClusterID, "pool1", "VM.Standard.E4.Flex", 1, 16, 1)
	return s, nil
}

// clusterView is what Clusters and Describe show of a cluster: itself,
// and its node pools for people.
type clusterView struct {
	Cluster
	pools string
}

func (s *Server) views() []clusterView {
	var out []clusterView
	s.Do(func(now time.Time) {
		s.tick(now)
		for _, c := range s.clusters {
			var pools []string
			for _, p := range s.sortedPools(c.CompartmentID, c.ID) {
				if p.lifecycle() != stateDeleted {
					pools = append(pools, ptr.Deref(p.np.Name, ""))
				}
			}
			v := clusterView{Cluster: c.Cluster, pools: demo.List(pools)}
			v.Subnets = maps.Clone(c.Subnets)
			out = append(out, v)
		}
	})
	slices.SortFunc(out, func(a, b clusterView) int { return strings.Compare(a.Name+a.ID, b.Name+b.ID) })
	return out
}

// Clusters returns the emulator's clusters as kpool registers them when the
// emulator is served at endpoint (only Name and Spec set).
func (s *Server) Clusters(endpoint string) []kpool.Cluster {
	var out []kpool.Cluster
	for _, c := range s.views() {
		oci := &kpool.OCICluster{Region: c.Region, CompartmentID: c.CompartmentID, ClusterID: c.ID, ImageID: c.ImageID, Subnets: c.Subnets}
		out = append(out, demo.Cluster(c.Name, endpoint, kpool.ClusterPlatform{Type: kpool.PlatformOCI, OCI: oci}))
	}
	return out
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint, and what an outside client needs to sign its
// requests: when the emulator takes the demo key, the OCI config profile
// of the demo tenancy, written with the demo key's PEM (never printed) to
// DemoStateDir (describeClients).
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "any well-formed OCI HTTP signature (rsa-sha256)"
	demoKeyTaken := false
	if len(s.keys) > 0 {
		k, _ := demoKey()
		auth = fmt.Sprintf("OCI HTTP signature with one of its %d API keys", len(s.keys))
		if _, demoKeyTaken = s.keys[KeyID(DemoTenancy, DemoUser, &k.PublicKey)]; demoKeyTaken {
			auth = "OCI HTTP signature with the demo API key (a published key of kpool's source, no secret: it opens this emulator only)"
		}
	}
	fmt.Fprintf(w, "  auth:      %s\n  api:       OKE Container Engine %s (oci-go-sdk/v65/containerengine, client.Host %s)\n", auth, APIVersion, endpoint)
	if demoKeyTaken {
		describeClients(w, endpoint)
	}
	for _, c := range s.views() {
		fmt.Fprintf(w, "  OKE cluster %s (%s, %s, compartment %s, Kubernetes %s, node pools: %s):\n", c.Name, c.ID, c.Region, c.CompartmentID, c.Version, c.pools)
		fmt.Fprintf(w, "    default image: %s\n", c.ImageID)
		for _, ad := range kpool.SortedKeys(c.Subnets) {
			fmt.Fprintf(w, "    subnet %s: %s\n", ad, c.Subnets[ad])
		}
		fmt.Fprintf(w, "    node pools:    %s/%s/nodePools?compartmentId=%s&clusterId=%s\n", endpoint, APIVersion, c.CompartmentID, c.ID)
		fmt.Fprintf(w, "    kubernetes:    %s (the nodes of its node pools as OKE registers them, pods, PDBs, eviction; its kubeconfig: POST %s/%s/clusters/%s/kubeconfig/content, whose user runs `oci ce cluster generate-token`, whose tokens it takes)\n",
			s.kube.api.ServerURL(endpoint, c.ID), endpoint, APIVersion, c.ID)
	}
}
