package cloudsim_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim"
	"github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
)

// firstWrite records what is written and signals the first write.
type firstWrite struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
	ch   chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	w.once.Do(func() { close(w.ch) })
	return n, err
}

func (w *firstWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// makeAKS is the AKS emulator with its demo cluster, as cmd/kpool lists it.
func makeAKS(o sim.Options) (cloudsim.Emulator, error) { return aks.Demo(o) }

// echo is a small emulator on the engine that is no cloud: it answers
// each request with its path, after the engine's rate limit.
type echo struct{ *sim.Engine }

func makeEcho(o sim.Options) (cloudsim.Emulator, error) {
	e := &echo{}
	e.Engine = sim.New(o, sim.Protocol{Routes: e.serve})
	return e, nil
}

func (e *echo) serve(r *sim.Request) *sim.Reply {
	rep := sim.NewReply(http.StatusOK)
	rep.Body = []byte(r.HTTP.URL.Path)
	return rep
}

func (e *echo) Identity() (kpool.PlatformType, any) { return kpool.PlatformK3s, nil }

func (e *echo) Clusters(endpoint string) []kpool.Cluster {
	return []kpool.Cluster{{Name: "demo-echo", Spec: kpool.ClusterSpec{Endpoint: endpoint,
		Platform: kpool.ClusterPlatform{Type: kpool.PlatformK3s, K3s: &kpool.EmptyPlatform{}}}}}
}

func (e *echo) Describe(w io.Writer, endpoint string) {
	fmt.Fprintf(w, "  echo:      %s/anything\n", endpoint)
}

// agentPools is an SDK client of an AKS emulator at endpoint.
func agentPools(t *testing.T, endpoint string, transport policy.Transporter) *armcontainerservice.AgentPoolsClient {
	t.Helper()
	cl, err := armcontainerservice.NewAgentPoolsClient(aks.DemoSubscription, aks.Credential{}, &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: endpoint, Audience: "https://management.core.windows.net/"}}},
		Transport: transport,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestRun(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out := &firstWrite{ch: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := cloudsim.Config{Emulators: map[string]cloudsim.Maker{"aks": makeAKS}, Names: []string{"aks"},
		Listen: "127.0.0.1:0", Options: cloudsim.Defaults()}
	go func() { done <- cloudsim.Run(ctx, cfg, caFile, out) }()
	select {
	case <-out.ch:
	case err := <-done:
		t.Fatalf("Run returned %v", err)
	}
	text := out.String()
	t.Logf("Run printed:\n%s", text)
	m := regexp.MustCompile(`endpoint:\s+(https://\S+)`).FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, caFile) || !strings.Contains(text, aks.DemoSubscription) ||
		!strings.Contains(text, "kpool-demo") || !strings.Contains(text, "demo-aks") || !strings.Contains(text, "5s plus 2s per node") {
		t.Fatalf("output:\n%s", text)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("the CA file does not parse")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	page, err := agentPools(t, m[1], hc).NewListPager(aks.DemoResourceGroup, aks.DemoCluster, nil).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Value) != 1 || *page.Value[0].Name != "nodepool1" || *page.Value[0].Properties.Mode != armcontainerservice.AgentPoolModeSystem ||
		*page.Value[0].Properties.ProvisioningState != "Succeeded" {
		t.Fatalf("demo pools: %+v", page.Value)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestRunUnknownProvider(t *testing.T) {
	cfg := cloudsim.Config{Emulators: map[string]cloudsim.Maker{"aks": makeAKS}, Names: []string{"aks", "eks"}}
	err := cloudsim.Run(context.Background(), cfg, "", io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"eks"`) || !strings.Contains(err.Error(), "aks") {
		t.Fatalf("unknown provider: %v", err)
	}
	if _, err := cloudsim.Start(cloudsim.Config{}); err == nil {
		t.Fatal("Start with no emulators")
	}
}

// Two emulators at once, each on its own listener with its own engine,
// the same options, one CA: both are driven, each sees only its calls.
func TestStartSeveral(t *testing.T) {
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	r, err := cloudsim.Start(cloudsim.Config{
		Emulators: map[string]cloudsim.Maker{"aks": makeAKS, "echo": makeEcho},
		Options:   sim.Options{Clock: clock, OperationTime: time.Minute, RateLimit: 0.001, Burst: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Emulators) != 2 || r.Emulators[0].Name != "aks" || r.Emulators[1].Name != "echo" || r.Emulators[0].URL == r.Emulators[1].URL {
		t.Fatalf("emulators %+v", r.URLs())
	}
	var names []string
	for i, c := range r.Clusters {
		names = append(names, c.Name)
		if c.Spec.Endpoint != r.Emulators[i].URL {
			t.Fatalf("cluster %s at %s, its emulator at %s", c.Name, c.Spec.Endpoint, r.Emulators[i].URL)
		}
	}
	if strings.Join(names, ",") != "demo-aks,demo-echo" {
		t.Fatalf("demo clusters %v", names)
	}
	client := r.Client()
	ctx := context.Background()

	// AKS through its SDK: a create, then the list (the second token).
	pools := agentPools(t, r.Emulators[0].URL, client)
	if _, err := pools.BeginCreateOrUpdate(ctx, aks.DemoResourceGroup, aks.DemoCluster, "web", armcontainerservice.AgentPool{
		Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{VMSize: ptr.To("Standard_D4s_v5"), Count: ptr.To(int32(2))}}, nil); err != nil {
		t.Fatal(err)
	}
	page, err := pools.NewListPager(aks.DemoResourceGroup, aks.DemoCluster, nil).NextPage(ctx)
	if err != nil || len(page.Value) != 2 {
		t.Fatalf("AKS list: %v, %d pools", err, len(page.Value))
	}
	// The echo emulator over plain HTTP: its own bucket of two.
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		resp, err := client.Get(r.Emulators[1].URL + "/ping")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK && string(b) != "/ping") {
			t.Fatalf("echo request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	// AKS's bucket is spent too, and the clock is the one given.
	_, err = pools.NewListPager(aks.DemoResourceGroup, aks.DemoCluster, nil).NextPage(ctx)
	if err == nil || !strings.Contains(err.Error(), "TooManyRequests") {
		t.Fatalf("a third AKS request: %v", err)
	}
	akss, echos := r.Emulators[0].Emulator.(*aks.Server).Calls(), r.Emulators[1].Emulator.(*echo).Calls()
	if len(akss) != 3 || len(echos) != 3 || !akss[0].Created || echos[0].Path != "/ping" || !akss[0].Time.Equal(clock.Now()) {
		t.Fatalf("AKS calls %+v\necho calls %+v", akss, echos)
	}
	for _, c := range akss {
		if !strings.HasPrefix(c.Path, "/subscriptions/") {
			t.Fatalf("AKS got %s", c.Path)
		}
	}
	st, ok := r.Emulators[0].Emulator.(*aks.Server).Pool(aks.DemoSubscription, aks.DemoResourceGroup, aks.DemoCluster, "web")
	if !ok || st.Operation != "Creating" {
		t.Fatalf("the pool before the clock moved: %+v", st)
	}
	clock.Advance(time.Hour)
	if st, _ := r.Emulators[0].Emulator.(*aks.Server).Pool(aks.DemoSubscription, aks.DemoResourceGroup, aks.DemoCluster, "web"); st.ReadyNodes != 2 {
		t.Fatalf("the pool after an hour: %+v", st)
	}
}
