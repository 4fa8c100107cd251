package reconcile_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kpool/kpool/service"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/oracle/oci-go-sdk/v65/common"
	"golang.org/x/oauth2"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/cloudsim"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	civosim "github.com/kpool/kpool/cloudsim/civo"
	ekssim "github.com/kpool/kpool/cloudsim/eks"
	gkesim "github.com/kpool/kpool/cloudsim/gke"
	okesim "github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/catalog/clouds"
	"github.com/kpool/kpool/provider/providertest"
	"github.com/kpool/kpool/reconcile"
	"github.com/kpool/kpool/store/storetest"
	"github.com/kpool/kpool/store/testdb"
)

// bearer is an Azure identity with a fixed access token.
type bearer string

func (b bearer) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(b), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func randomText(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// echoCredentials are the credentials of the five clouds' clusters at
// endpoint: each cloud's of kind emulator, with an identity of its own (an
// ARM bearer token, an AWS access key, a Google access token, an OCI
// signing key, a Civo API key), allowed to endpoint alone.
func echoCredentials(t *testing.T, endpoint string) *provider.CredentialSet {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[kpool.PlatformType]any{
		kpool.PlatformAzure: azcore.TokenCredential(bearer("arm-" + randomText(t, 20))),
		kpool.PlatformAWS:   credentials.NewStaticCredentialsProvider("AKIA"+strings.ToUpper(randomText(t, 8)), randomText(t, 20), ""),
		kpool.PlatformGCP:   oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29." + randomText(t, 20), TokenType: "Bearer"}),
		kpool.PlatformOCI:   common.NewRawConfigurationProvider(okesim.DemoTenancy, okesim.DemoUser, okesim.DemoRegion, okesim.Fingerprint(&key.PublicKey), okesim.PEM(key), nil),
		kpool.PlatformCivo:  "civo-" + randomText(t, 20),
	}
	creds, err := provider.WithEmulators(nil, catalog.Profiles(), ids, []string{endpoint}, "")
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// echoClusters are the emulators' demo clusters, one per cloud, at
// endpoint, and the block of a pool of each cloud.
func echoClusters(t *testing.T, endpoint string) (out []kpool.Cluster, pools map[kpool.PlatformType]string) {
	for _, emu := range []cloudsim.Emulator{demo(t, aksim.Demo), demo(t, ekssim.Demo), demo(t, gkesim.Demo), demo(t, okesim.Demo), demo(t, civosim.Demo)} {
		out = append(out, emu.Clusters(endpoint)[0])
	}
	return out, map[kpool.PlatformType]string{
		kpool.PlatformAzure: `{"azure":{"vmSize":"Standard_D4s_v5"}}`,
		kpool.PlatformAWS:   `{"aws":{"instanceType":"m5.xlarge"}}`,
		kpool.PlatformGCP:   `{"gcp":{"machineType":"n2-standard-4"}}`,
		kpool.PlatformOCI:   `{"oci":{"shape":"VM.Standard.E4.Flex","ocpus":2,"memoryInGBs":16}}`,
		kpool.PlatformCivo:  `{"civo":{"size":"g4s.kube.medium"}}`,
	}
}

// demo returns the demo emulator newDemo makes (never served: only its
// clusters are wanted).
func demo[E cloudsim.Emulator](t *testing.T, newDemo func(sim.Options) (E, error)) cloudsim.Emulator {
	t.Helper()
	emu, err := newDemo(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return emu
}

// TestE2EEchoedCredentialsAreNotStored (issue 27, N8): a cluster of each
// cloud at an allowed endpoint that answers every request 400 quoting the
// request's credentials. The controllers report each pool's cluster
// unreachable, with the provider's words; what the API then shows (the
// pools, their status, the clusters, the events) quotes the echo but
// holds no credential of any of the five clouds: the service scrubs each
// report before storing it.
func TestE2EEchoedCredentialsAreNotStored(t *testing.T) {
	e2e(t)
	ca := providertest.NewCA(t)
	echo := providertest.Listen(t, ca, providertest.Echo)
	creds := echoCredentials(t, echo.URL)
	svc := service.New(testdb.SQLite(t), clouds.Registry(provider.DriverOptions{Credentials: creds, Transport: providertest.NewClient(ca).Transport}))
	svc.Endpoints, _ = kpool.ParseOrigins([]string{echo.URL})
	svc.Credentials = creds
	ctx := storetest.Ctx(owner)
	clusters, blocks := echoClusters(t, echo.URL)
	var paths []string
	for _, c := range clusters {
		spec, _ := json.Marshal(c.Spec)
		cl, err := svc.CreateCluster(ctx, service.ClusterCreate{Name: c.Name, Spec: spec})
		if err != nil {
			t.Fatalf("%s: %v", c.Spec.Platform.Type, err)
		}
		p, err := svc.CreateNodePool(ctx, service.NodePoolCreate{Name: "web", ClusterID: cl.ID,
			Spec: json.RawMessage(`{"nodeCount":1,"platform":` + blocks[c.Spec.Platform.Type] + `}`)})
		if err != nil {
			t.Fatalf("%s: %v", c.Spec.Platform.Type, err)
		}
		paths = append(paths, "/api/v1/clusters/"+cl.ID, "/api/v1/nodepools/"+p.ID, "/api/v1/nodepools/"+p.ID+"/status",
			"/api/v1/events?cluster_id="+cl.ID)
	}
	stop := runController(t, svc)
	defer stop()
	waitEchoed(t, svc, len(clusters))
	stop()

	secrets := echo.Secrets()
	if clouds := echoedClouds(echo); clouds != 5 {
		t.Fatalf("credentials of %d clouds reached the endpoint, want 5: %v", clouds, echo.Requests())
	}
	srv := httptest.NewServer(api.NewServer(svc, mustAccess(t), slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	quoted := 0
	for _, path := range paths {
		body := get(t, srv.URL+path)
		if strings.Contains(body, providertest.EchoMarker) {
			quoted++
		}
		if leaked := providertest.Leaked(body, secrets); len(leaked) > 0 {
			t.Errorf("GET %s shows %d credentials:\n%s", path, len(leaked), body)
		}
	}
	if quoted < len(clusters) {
		t.Fatalf("%d API reads quote the echo; want each cloud's at least", quoted)
	}
}

// echoedClouds counts the clouds whose requests reached the echo with a
// credential, told by their paths.
func echoedClouds(echo *providertest.Listener) int {
	seen := map[string]bool{}
	for _, r := range echo.Requests() {
		if len(r.Credentials) == 0 {
			continue
		}
		for _, prefix := range []string{"/subscriptions/", "/clusters", "/v1/projects/", "/20180222/", "/v2/"} {
			if strings.HasPrefix(r.Path, prefix) {
				seen[prefix] = true
			}
		}
	}
	return len(seen)
}

func runController(t *testing.T, svc *service.Service) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ctl := reconcile.New(reconcile.Config{Service: svc, Drivers: svc.Platforms.(*provider.Registry), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Holder: "echo", Workers: 4, ResyncFast: 25 * time.Millisecond, ResyncSlow: time.Second, PollEvents: 50 * time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// waitEchoed waits until n pools' status quotes the echo.
func waitEchoed(t *testing.T, svc *service.Service, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wake := svc.Store.Subscribe(ctx)
	for {
		pools, _, err := svc.Store.NodePools(ctx, kpool.NodePoolFilter{Page: kpool.Page{Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, p := range pools {
			if strings.Contains(p.Status.Message, providertest.EchoMarker) {
				got++
			}
		}
		if got == n {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("%d of %d pools report the echo", got, n)
		}
	}
}

func mustAccess(t *testing.T) *auth.Access {
	a, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// get reads url as the clusters' owner and returns the body.
func get(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-User-Email", owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}
