package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/cloudsim/sim"
)

func TestOTLPURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":            "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":           "http://127.0.0.1:4318/v1/traces",
		"https://collector:4318/otlp/v1/t": "https://collector:4318/otlp/v1/t",
		"ftp://collector":                  "",
		"127.0.0.1:4318":                   "",
		"http://user:secret@collector":     "",
		"http://collector/?token=x":        "",
		"http:///v1/traces":                "",
	} {
		got, err := otlpURL(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("otlpURL(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}

// TestNoTracingWithoutEndpoint: without --otlp-endpoint a process has no
// tracer provider and its service's store is the store itself.
func TestNoTracingWithoutEndpoint(t *testing.T) {
	p := listenerProcess(t)
	if p.tp != nil || p.traces() != nil || p.svc.Store != p.store {
		t.Fatalf("traced without an endpoint: %v %v", p.tp, p.svc.Store)
	}
}

// collector is an OTLP/HTTP collector on loopback: it keeps every span
// posted to /v1/traces (protobuf) with its service's name, and signals
// each batch.
type collector struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service map[string]bool
	batch   chan struct{}
}

func newCollector(t *testing.T) *collector {
	c := &collector{service: map[string]bool{}, batch: make(chan struct{}, 1)}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req coltracepb.ExportTraceServiceRequest
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("collector: %s %s %s: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					c.service[a.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		select {
		case c.batch <- struct{}{}:
		default:
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// chain finds, among the spans collected, a provider create call, the
// reconcile pass it is part of, and the API request that pass links to,
// with a store transaction under the request; it says what is missing.
func (c *collector) chain() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byID := map[string]*tracepb.Span{}
	for _, s := range c.spans {
		byID[hex.EncodeToString(s.TraceId)+hex.EncodeToString(s.SpanId)] = s
	}
	for _, s := range c.spans {
		if s.Name != "provider.create" || attrOf(s, "kpool.result") != "ok" {
			continue
		}
		pass := byID[hex.EncodeToString(s.TraceId)+hex.EncodeToString(s.ParentSpanId)]
		if pass == nil || pass.Name != "reconcile cluster" {
			return "the provider create's reconcile pass", false
		}
		for _, l := range pass.Links {
			req := byID[hex.EncodeToString(l.TraceId)+hex.EncodeToString(l.SpanId)]
			if req == nil || req.Kind != tracepb.Span_SPAN_KIND_SERVER || !strings.HasPrefix(req.Name, "POST /api/v1/") || attrOf(req, "kpool.request_id") == "" {
				continue
			}
			for _, st := range c.spans {
				if strings.HasPrefix(st.Name, "store.") && string(st.ParentSpanId) == string(req.SpanId) {
					return "", c.service["kpool"]
				}
			}
			return "a store span under the request", false
		}
		return "the request the pass links to", false
	}
	return "a provider create", false
}

func attrOf(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// TestOTLPExport is issue 32's "done when" for traces: kpool dev with
// --otlp-endpoint on a loopback collector, one nodepool create, and the
// collector receives the request's span, its store transaction, and the
// controllers' pass linked to it with the provider's create call in it.
func TestOTLPExport(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // batches every 20ms, not 5s
	col := newCollector(t)
	clock := sim.NewManualClock(time.Now())
	printed := startDev(t, clock, func(f *serveFlags) { f.otlpEndpoint = col.URL })
	m := regexp.MustCompile(`export KPOOL_SERVER=(\S+) KPOOL_TOKEN=(\S+)`).FindStringSubmatch(printed)
	create := regexp.MustCompile(`go run ./cmd/kpool (nodepool create .*)`).FindStringSubmatch(printed)
	if m == nil || create == nil {
		t.Fatalf("kpool dev printed no server, token or create:\n%s", printed)
	}
	// Every demo cluster's facts first: a cloud SDK's call cut short when
	// the test ends is not what it is about.
	c := api.NewClient(m[1], "")
	c.Token = m[2]
	for _, cl := range regexp.MustCompile(`nodepool create \S+ --cluster (\S+)`).FindAllStringSubmatch(printed, -1) {
		waitFacts(t, c, clock, cl[1])
	}
	args := append(strings.Fields(create[1]), "--server", m[1], "--token", m[2], "--timeout", "2m")
	if _, stderr, err := executeOn(clockWaits(clock), "", args...); err != nil {
		t.Fatalf("kpool %s: %v\n%s", create[1], err, stderr)
	}
	deadline := time.After(time.Minute)
	for {
		missing, ok := col.chain()
		if ok {
			return
		}
		select {
		case <-col.batch:
		case <-deadline:
			t.Fatalf("after a minute the collector has no %s; it has:\n%s", missing, col.dump())
		}
	}
}

// dump lists the spans collected: name, trace, span, parent and links.
func (c *collector) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, s := range c.spans {
		fmt.Fprintf(&b, "  %s trace %x span %x parent %x", s.Name, s.TraceId[:4], s.SpanId[:4], s.ParentSpanId)
		for _, l := range s.Links {
			fmt.Fprintf(&b, " link %x/%x", l.TraceId[:4], l.SpanId[:4])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// waitFacts returns once the controllers have learnt what cluster offers,
// moving the emulators' clock meanwhile.
func waitFacts(t *testing.T, c *api.Client, clock *sim.ManualClock, cluster string) {
	t.Helper()
	ctx := context.Background()
	id, err := c.ClusterID(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		f, err := c.ClusterFacts(ctx, id)
		switch {
		case err != nil:
			t.Fatal(err)
		case f != nil:
			return
		case time.Now().After(deadline):
			t.Fatalf("%s: no facts learnt in a minute", cluster)
		}
		clock.Advance(time.Second)
		_ = pollEvery(20 * time.Millisecond).Tick(ctx)
	}
}
