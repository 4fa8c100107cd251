package oke

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
)

// The demo cluster Demo holds.
const (
	DemoCluster     = "demo-oke"
	DemoRegion      = "us-ashburn-1"
	DemoTenancy     = "ocid1.tenancy.oc1..aaaaaaaakpoolcloudsimdemotenancy"
	DemoUser        = "ocid1.user.oc1..aaaaaaaakpoolcloudsimdemouser"
	DemoCompartment = "ocid1.compartment.oc1..aaaaaaaakpoolcloudsimdemo"
	DemoClusterID   = "ocid1.cluster.oc1.iad.aaaaaaaakpoolcloudsimdemooke"
	DemoVersion     = "v1.31.1"
	DemoImage       = "ocid1.image.oc1.iad.aaaaaaaakpoolcloudsimoracle8oke"
)

// DemoSubnets are the demo cluster's worker subnets by availability domain.
var DemoSubnets = map[string]string{
	"Uocm:US-ASHBURN-AD-1": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad1",
	"Uocm:US-ASHBURN-AD-2": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad2",
	"Uocm:US-ASHBURN-AD-3": "ocid1.subnet.oc1.iad.aaaaaaaakpoolcloudsimad3",
}

// demoKey is the demo signing key, made once per process. It is no secret:
// it signs requests to the emulator only.
var demoKey = sync.OnceValues(func() (*rsa.PrivateKey, string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k, Fingerprint(&k.PublicKey)
})

// Fingerprint is an API signing key's fingerprint as OCI shows it: the MD5
// of its DER public key, in colon-separated hex pairs.
func Fingerprint(k *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	sum := md5.Sum(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

// KeyID is the keyId of an API key: tenancy/user/fingerprint.
func KeyID(tenancy, user string, k *rsa.PublicKey) string {
	return tenancy + "/" + user + "/" + Fingerprint(k)
}

// PEM encodes a private key as the PEM an OCI config file's key_file holds.
func PEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// Identity returns OKE and the demo signing key (DemoConfigProvider).
func (s *Server) Identity() (kpool.PlatformType, any) { return kpool.PlatformOCI, DemoConfigProvider() }

// DemoConfigProvider is the demo signing key as an OCI configuration
// provider, for a driver that talks to the demo emulator.
func DemoConfigProvider() common.ConfigurationProvider {
	k, fp := demoKey()
	return common.NewRawConfigurationProvider(DemoTenancy, DemoUser, DemoRegion, fp, PEM(k), nil)
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

// AddPool adds an ACTIVE node pool of size nodes of a flexible shape to a
// cluster, placed in every availability domain it has a subnet in.
func (s *Server) AddPool(clusterID, name, shape string, ocpus, memoryInGBs float32, size int) {
	s.Do(func(now time.Time) {
		c, ok := s.clusters[clusterID]
		if !ok {
			return
		}
		var pcs []ce.NodePoolPlacementConfigDetails
		for _, ad := range kpool.SortedKeys(c.Subnets) {
			pcs = append(pcs, ce.NodePoolPlacementConfigDetails{AvailabilityDomain: common.String(ad), SubnetId: common.String(c.Subnets[ad])})
		}
		id := ocid("nodepool", c.Region, s.NewID())
		s.seq++
		p := &pool{id: id, cluster: c, state: stateActive, created: now, seq: s.seq, np: ce.NodePool{
			CompartmentId: common.String(c.CompartmentID), ClusterId: common.String(c.ID), Name: common.String(name),
			KubernetesVersion: common.String(c.Version), NodeShape: common.String(shape),
			NodeShapeConfig:   &ce.NodeShapeConfig{Ocpus: common.Float32(ocpus), MemoryInGBs: common.Float32(memoryInGBs)},
			NodeSourceDetails: ce.NodeSourceViaImageDetails{ImageId: common.String(c.ImageID), BootVolumeSizeInGBs: common.Int64(50)},
			InitialNodeLabels: []ce.KeyValue{}, FreeformTags: map[string]string{},
			NodeConfigDetails: &ce.NodePoolNodeConfigDetails{Size: common.Int(size), PlacementConfigs: pcs, FreeformTags: map[string]string{}},
		}}
		s.pools[id] = p
		for range size {
			p.addNode(s)
		}
		for _, n := range p.nodes {
			n.state = string(ce.NodeLifecycleStateActive)
		}
	})
}

type clusterView struct {
	Cluster
	pools []string
}

func (s *Server) views() []clusterView {
	var out []clusterView
	s.Do(func(now time.Time) {
		s.tick(now)
		for _, c := range s.clusters {
			v := clusterView{Cluster: c.Cluster}
			v.Subnets = cloneMap(c.Subnets)
			for _, p := range s.sortedPools(c.CompartmentID, c.ID) {
				if p.lifecycle() != stateDeleted {
					v.pools = append(v.pools, ptr.Deref(p.np.Name, ""))
				}
			}
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
		out = append(out, kpool.Cluster{Name: c.Name, Spec: kpool.ClusterSpec{
			Endpoint: endpoint,
			Platform: kpool.ClusterPlatform{Type: kpool.PlatformOCI, OCI: &kpool.OCICluster{
				Region: c.Region, CompartmentID: c.CompartmentID, ClusterID: c.ID, ImageID: c.ImageID, Subnets: c.Subnets}},
		}})
	}
	return out
}

// Describe writes, for people, how to reach the emulator's clusters when
// it is served at endpoint. The demo key's identity is shown, never a
// private key.
func (s *Server) Describe(w io.Writer, endpoint string) {
	auth := "any well-formed OCI HTTP signature (rsa-sha256)"
	if len(s.keys) > 0 {
		k, fp := demoKey()
		auth = fmt.Sprintf("OCI HTTP signature with one of its %d API keys", len(s.keys))
		if _, ok := s.keys[KeyID(DemoTenancy, DemoUser, &k.PublicKey)]; ok {
			auth = "OCI HTTP signature with the demo API key (tenancy " + DemoTenancy + ", user " + DemoUser + ", fingerprint " + fp +
				"; oke.DemoConfigProvider() in this process)"
		}
	}
	fmt.Fprintf(w, "  auth:      %s\n  api:       OKE Container Engine %s (oci-go-sdk/v65/containerengine, client.Host %s)\n", auth, APIVersion, endpoint)
	for _, c := range s.views() {
		pools := strings.Join(c.pools, ", ")
		if pools == "" {
			pools = "none"
		}
		fmt.Fprintf(w, "  OKE cluster %s (%s, %s, compartment %s, Kubernetes %s, node pools: %s):\n", c.Name, c.ID, c.Region, c.CompartmentID, c.Version, pools)
		fmt.Fprintf(w, "    default image: %s\n", c.ImageID)
		for _, ad := range kpool.SortedKeys(c.Subnets) {
			fmt.Fprintf(w, "    subnet %s: %s\n", ad, c.Subnets[ad])
		}
		fmt.Fprintf(w, "    node pools:    %s/%s/nodePools?compartmentId=%s&clusterId=%s\n", endpoint, APIVersion, c.CompartmentID, c.ID)
	}
}
