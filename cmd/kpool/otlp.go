package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kpool/kpool/api"
)

// otlpTracesPath is where an OTLP/HTTP collector takes traces: appended to
// an --otlp-endpoint given without a path, as OTEL_EXPORTER_OTLP_ENDPOINT
// is.
const otlpTracesPath = "/v1/traces"

// otlpURL checks an --otlp-endpoint and returns the URL spans are posted
// to: http or https, a host, no credentials or query (a collector's token
// goes in OTEL_EXPORTER_OTLP_HEADERS, which the exporter reads, so that
// it is never in a flag or a log line).
func otlpURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return "", fmt.Errorf("--otlp-endpoint: %v", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", fmt.Errorf("--otlp-endpoint %q: give the collector's OTLP/HTTP URL, such as http://127.0.0.1:4318", endpoint)
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return "", fmt.Errorf("--otlp-endpoint: give no credentials, query or fragment in the URL; a collector's token goes in OTEL_EXPORTER_OTLP_HEADERS")
	}
	if strings.TrimSuffix(u.Path, "/") == "" {
		u.Path = otlpTracesPath
	}
	return u.String(), nil
}

// newTracing returns the tracer provider that exports kpool's spans to
// the OTLP/HTTP collector at endpoint, in batches; shut it down to flush
// them. It is handed to the API, the store and the controllers, never
// installed as OpenTelemetry's global provider.
func newTracing(ctx context.Context, endpoint string) (*sdktrace.TracerProvider, error) {
	target, err := otlpURL(endpoint)
	if err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target))
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "kpool"), attribute.String("service.version", api.BuildVersion().Version)))
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// shutdownTracing flushes the spans not yet sent, waiting at most 5s for
// the collector.
func shutdownTracing(tp *sdktrace.TracerProvider) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return tp.Shutdown(ctx)
}

// dbSystem names the database of a --database value for the store's
// spans (db.system.name).
func dbSystem(database string) string {
	if strings.HasPrefix(database, "sqlite:") {
		return "sqlite"
	}
	return "postgresql"
}
