package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kpool/kpool/cloudsim"
	aksim "github.com/kpool/kpool/cloudsim/aks"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

func TestCloudsimFlags(t *testing.T) {
	t.Parallel()
	defaults := cloudsim.Defaults()
	defaults.Seed = 1
	bad := defaults
	bad.Latency, bad.RateLimit, bad.Burst, bad.FaultRate, bad.Seed = 250*time.Millisecond, 5, 10, 0.2, 3
	for _, tc := range []struct {
		args []string
		want sim.Options
		err  string
	}{
		{nil, defaults, ""},
		{[]string{"--latency", "250ms", "--rate-limit", "5", "--burst", "10", "--fault-rate", "0.2", "--seed", "3"}, bad, ""},
		{[]string{"--latency", "-1s"}, sim.Options{}, "--latency -1s"},
		{[]string{"--rate-limit", "-1"}, sim.Options{}, "--rate-limit -1"},
		{[]string{"--rate-limit", "NaN"}, sim.Options{}, "--rate-limit NaN"},
		{[]string{"--rate-limit", "1", "--burst", "-2"}, sim.Options{}, "--burst -2"},
		{[]string{"--burst", "3"}, sim.Options{}, "give --rate-limit too"},
		{[]string{"--fault-rate", "1.5"}, sim.Options{}, "--fault-rate 1.5"},
		{[]string{"--fault-rate", "-0.1"}, sim.Options{}, "--fault-rate -0.1"},
	} {
		var f cloudsimFlags
		fs := pflag.NewFlagSet("cloudsim", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got, err := f.options()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

// startCloudsim runs `kpool cloudsim` with args until the test ends and
// returns the AKS emulator's endpoint, a client that trusts it, and the
// banner.
func startCloudsim(t *testing.T, args ...string) (endpoint string, client *http.Client, banner string) {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := newRoot()
	root.SetOut(pw)
	root.SetArgs(append([]string{"cloudsim", "--listen", "127.0.0.1:0", "--ca-file", caFile}, args...))
	exited := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		exited <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil {
			t.Errorf("kpool cloudsim: %v", err)
		}
	})
	var b strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() && !strings.Contains(sc.Text(), "Register") {
		b.WriteString(sc.Text() + "\n")
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`endpoint:\s+(https://\S+)`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("kpool cloudsim printed no endpoint:\n%s", b.String())
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("the CA file does not parse")
	}
	return m[1], &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}, b.String()
}

// listDemoPools sends the agent-pool list of the demo cluster.
func listDemoPools(ctx context.Context, client *http.Client, endpoint string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/subscriptions/"+aksim.DemoSubscription+"/resourceGroups/"+aksim.DemoResourceGroup+
		"/providers/Microsoft.ContainerService/managedClusters/"+aksim.DemoCluster+"/agentPools?api-version="+aksim.APIVersion, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer kpool-cloudsim")
	resp, err := client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// With --fault-rate 1 every request fails: a 500, a 503 or a dropped
// connection.
func TestCloudsimFaultRate(t *testing.T) {
	t.Parallel()
	endpoint, client, banner := startCloudsim(t, "--fault-rate", "1", "--seed", "5")
	if !strings.Contains(banner, "fault rate 1, seed 5") {
		t.Errorf("banner:\n%s", banner)
	}
	statuses := map[int]int{}
	for i := 0; i < 30; i++ {
		resp, err := listDemoPools(context.Background(), client, endpoint)
		if err != nil {
			statuses[0]++ // dropped
			continue
		}
		statuses[resp.StatusCode]++
		if resp.StatusCode != http.StatusInternalServerError && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("request %d: %d at a fault rate of 1", i, resp.StatusCode)
		}
	}
	if statuses[0] == 0 || statuses[500] == 0 || statuses[503] == 0 {
		t.Errorf("answers by status (0: dropped): %v", statuses)
	}
}

// With --rate-limit and --burst, requests beyond the burst are 429 with
// Retry-After.
func TestCloudsimRateLimit(t *testing.T) {
	t.Parallel()
	endpoint, client, banner := startCloudsim(t, "--rate-limit", "0.001", "--burst", "2")
	if !strings.Contains(banner, "rate limit 0.001 requests/s, burst 2") {
		t.Errorf("banner:\n%s", banner)
	}
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		resp, err := listDemoPools(context.Background(), client, endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		// The next token comes in 1000 s, less the wall time since the first request.
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); want == http.StatusTooManyRequests && (err != nil || secs < 900 || secs > 1000) {
			t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
	}
}

// --latency holds every answer that long on the emulators' clock: run on
// a clock the test drives, nothing is answered before it has moved that
// far, and the call log records the wait.
func TestCloudsimLatency(t *testing.T) {
	t.Parallel()
	var f cloudsimFlags
	fs := pflag.NewFlagSet("cloudsim", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--latency", "1500ms"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.options()
	if err != nil {
		t.Fatal(err)
	}
	clock := sim.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	o.Clock = clock
	r, err := cloudsim.Start(cloudsim.Config{Emulators: clouds.Emulators(), Options: o})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	answered := make(chan int, 1)
	go func() {
		resp, err := listDemoPools(ctx, r.Client(), r.Emulators[0].URL)
		if err != nil {
			answered <- -1
			return
		}
		answered <- resp.StatusCode
	}()
	if err := clock.WaitSleepers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1499 * time.Millisecond)
	select {
	case s := <-answered:
		t.Fatalf("answered %d before the latency passed", s)
	default:
	}
	clock.Advance(time.Millisecond)
	if s := <-answered; s != http.StatusOK {
		t.Fatalf("after the latency: %d", s)
	}
	calls := r.Emulators[0].Emulator.(*aksim.Server).Calls()
	if len(calls) != 1 || calls[0].Latency != 1500*time.Millisecond || !calls[0].Time.Equal(time.Date(2026, 11, 22, 0, 0, 1, 5e8, time.UTC)) {
		t.Fatalf("calls %+v", calls)
	}
}
