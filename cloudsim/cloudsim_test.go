package cloudsim_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/kpool/kpool/cloudsim"
)

func TestManualClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := cloudsim.NewManualClock(start)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.Advance(time.Second); _ = c.Now() }()
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("now %v", got)
	}
	var _ cloudsim.Clock = cloudsim.RealClock{}
}

func TestTLSServer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })
	ep, caPEM, err := cloudsim.TLSServer(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if !strings.HasPrefix(ep.URL, "https://127.0.0.1:") || !bytes.Equal(caPEM, ep.CAPEM) {
		t.Fatalf("url %s", ep.URL)
	}
	resp, err := ep.Client().Get(ep.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" || resp.ProtoMajor != 1 {
		t.Fatalf("%s over %s", b, resp.Proto)
	}
	// The certificate is for localhost too, and chains to the PEM returned.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA PEM does not parse")
	}
	conn, err := tls.Dial("tcp", ep.Addr.String(), &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// An untrusting client is refused.
	if _, err := http.Get(ep.URL); err == nil {
		t.Fatal("a client without the CA connected")
	}
}

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

type anyToken struct{}

func (anyToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "demo", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestRun(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out := &firstWrite{ch: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cloudsim.Run(ctx, "127.0.0.1:0", []string{"aks"}, caFile, out) }()
	select {
	case <-out.ch:
	case err := <-done:
		t.Fatalf("Run returned %v", err)
	}
	text := out.String()
	t.Logf("Run printed:\n%s", text)
	m := regexp.MustCompile(`endpoint:\s+(https://\S+)`).FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, caFile) || !strings.Contains(text, cloudsim.DemoSubscription) ||
		!strings.Contains(text, "kpool-demo") || !strings.Contains(text, "demo-aks") {
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
	cl, err := armcontainerservice.NewAgentPoolsClient(cloudsim.DemoSubscription, anyToken{}, &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: m[1], Audience: "https://management.core.windows.net/"}}},
		Transport: hc,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := cl.NewListPager(cloudsim.DemoResourceGroup, cloudsim.DemoCluster, nil).NextPage(ctx)
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
	err := cloudsim.Run(context.Background(), "", []string{"aks", "eks"}, "", io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"eks"`) || !strings.Contains(err.Error(), "aks") {
		t.Fatalf("unknown provider: %v", err)
	}
}
