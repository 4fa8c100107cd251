package oke_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
)

// TestDemoConfigFile: what "kpool cloudsim" prints and writes is enough for
// a client that reads an OCI config file, as Oracle's CLI and SDKs do, to
// reach the demo emulator: Describe writes the demo profile and key file
// (the key readable by its owner only, its PEM never printed), and a client
// configured from that file alone lists the demo pool.
func TestDemoConfigFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	demo, err := oke.Demo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(demo)
	srv.StartTLS()
	defer srv.Close()
	var b strings.Builder
	demo.Describe(&b, srv.URL)
	out := b.String()
	config := filepath.Join(oke.DemoStateDir(), "config")
	for _, want := range []string{oke.DemoTenancy, oke.DemoUser, oke.DemoFingerprint(), oke.DemoRegion, config, "--endpoint " + srv.URL} {
		if !strings.Contains(out, want) {
			t.Errorf("describe does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, oke.DemoPrivateKeyPEM[40:80]) {
		t.Fatalf("describe prints the key:\n%s", out)
	}
	key := filepath.Join(oke.DemoStateDir(), "demo-key.pem")
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	cp, err := common.ConfigurationProviderFromFile(config, "")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ce.NewContainerEngineClientWithConfigurationProvider(cp)
	if err != nil {
		t.Fatal(err)
	}
	cl.Host, cl.HTTPClient = srv.URL, srv.Client()
	list, err := cl.ListNodePools(ctx, ce.ListNodePoolsRequest{CompartmentId: common.String(oke.DemoCompartment), ClusterId: common.String(oke.DemoClusterID)})
	if err != nil || len(list.Items) != 1 || *list.Items[0].Name != "pool1" {
		t.Fatalf("a client of the config file: %+v %v", list.Items, err)
	}
}
