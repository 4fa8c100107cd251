package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/sqlite"
)

const (
	testUser       = "dev@example.com"
	testController = "gcp-controller@example.com"
)

// newServer starts the real API on an SQLite store and returns its URL. Its
// kpool has a driver for GCP (the in-memory fake), so that GCP pools wait for
// this kpool's controller, as AKS pools do in kpool serve.
func newServer(t *testing.T) string {
	t.Helper()
	reg := catalog.Registry()
	reg.Add(fake.New(fake.Options{Platform: kpool.PlatformGCP}))
	return newServerOn(t, reg)
}

// newServerOn is newServer with the platforms (and drivers) of reg.
func newServerOn(t *testing.T, reg *provider.Registry) string {
	t.Helper()
	svc := newService(t, reg)
	var err error
	svc.Endpoints, err = kpool.ParseOrigins([]string{"https://127.0.0.1:9999", "https://oci.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return serveAPI(t, svc)
}

// newService is a service on a fresh SQLite store with the platforms of reg.
func newService(t *testing.T, reg *provider.Registry) *service.Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kpool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return service.New(st, reg)
}

// serveAPI serves svc's API over real HTTP (testController a controller)
// and returns its URL.
func serveAPI(t *testing.T, svc *service.Service) string {
	t.Helper()
	access, err := auth.NewAccess(nil, []string{testController})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(svc, access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv.URL
}

// execute runs the kpool command line args with stdin and returns stdout
// and stderr.
func execute(stdin string, args ...string) (stdout, stderr string, err error) {
	return executeOn(clock{}, stdin, args...)
}

// executeOn is execute with the client commands on clk.
func executeOn(clk clock, stdin string, args ...string) (stdout, stderr string, err error) {
	root := newRootOn(clk)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// run runs a client command against srv as testUser.
func run(srv, stdin string, args ...string) (string, error) {
	out, _, err := execute(stdin, append(args, "--server", srv, "--user", testUser)...)
	return out, err
}

func mustRun(t *testing.T, srv string, args ...string) string {
	t.Helper()
	out, err := run(srv, "", args...)
	if err != nil {
		t.Fatalf("kpool %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// decode runs a command with -o json and decodes its output.
func decode[T any](t *testing.T, srv string, args ...string) T {
	t.Helper()
	var v T
	out := mustRun(t, srv, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kpool %s: %v in %s", strings.Join(args, " "), err, out)
	}
	return v
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterFlags register a valid cluster of each platform.
var clusterFlags = map[kpool.PlatformType][]string{
	kpool.PlatformGCP: {"--platform", "gcp", "--project-id", "my-project-1", "--location", "us-central1", "--cluster-name", "gke-1"},
	kpool.PlatformAWS: {"--platform", "aws", "--region", "us-west-2", "--cluster-name", "eks-1", "--node-role-arn", "arn:aws:iam::123456789012:role/eks-nodes",
		"--subnet", "us-west-2a=subnet-0123456789abcdef0", "--subnet", "us-west-2b=subnet-0123456789abcdef1"},
	kpool.PlatformAzure: {"--platform", "azure", "--subscription-id", "6f0c2a4e-0000-4000-8000-000000000001", "--resource-group", "rg-1", "--cluster-name", "aks-1", "--location", "westeurope"},
	kpool.PlatformOCI: {"--platform", "oci", "--region", "us-ashburn-1", "--compartment-id", "ocid1.compartment.oc1..aaa", "--cluster-id", "ocid1.cluster.oc1.iad.aaa",
		"--image-id", "ocid1.image.oc1.iad.aaa", "--subnet", "AD-1=ocid1.subnet.oc1.iad.aaa"},
	kpool.PlatformCivo: {"--platform", "civo", "--region", "LON1", "--cluster-id", "6f0c2a4e-0000-4000-8000-000000000002"},
	kpool.PlatformK3s:  {"--platform", "k3s"},
}

func createCluster(t *testing.T, srv, name string, pt kpool.PlatformType) string {
	t.Helper()
	return decode[kpool.Cluster](t, srv, append([]string{"cluster", "create", name}, flagsFor(pt, name)...)...).ID
}

// flagsFor are clusterFlags for a cloud cluster of name's own: a cloud
// cluster is registered once.
func flagsFor(pt kpool.PlatformType, name string) []string {
	h := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(name)))
	out := slices.Clone(clusterFlags[pt])
	for i := 0; i+1 < len(out); i++ {
		switch {
		case out[i] == "--cluster-name":
			out[i+1] = "c" + h
		case out[i] == "--cluster-id" && pt == kpool.PlatformOCI:
			out[i+1] = "ocid1.cluster.oc1.iad.aaa" + h
		case out[i] == "--cluster-id":
			out[i+1] = "6f0c2a4e-0000-4000-8000-0000" + h
		}
	}
	return out
}

func createPool(t *testing.T, srv, name, cluster string, flags ...string) *kpool.NodePool {
	t.Helper()
	p := decode[kpool.NodePool](t, srv, append([]string{"nodepool", "create", name, "--cluster", cluster}, flags...)...)
	return &p
}
