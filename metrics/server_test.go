package metrics_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/metrics"
)

// serve runs a Server until the returned stop is called; stop returns
// Start's error once it has returned.
func serve(t *testing.T, rec *metrics.Recorder, opts metrics.ServerOptions) (stop func() error) {
	t.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(t.Context())
	s, err := metrics.Listen(ctx, rec, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	return func() error { cancel(); return <-done }
}

func TestServerSplitsMetricsAndProbes(t *testing.T) {
	leaktest.Check(t)
	metricsAddr, healthAddr := testcluster.FreeAddr(t), testcluster.FreeAddr(t)
	rec := metrics.New()
	ready := errors.New("no rules loaded")
	stop := serve(t, rec, metrics.ServerOptions{MetricsAddr: metricsAddr, HealthAddr: healthAddr, Pprof: true,
		Ready: func() error { return ready }})
	m, h := "http://"+metricsAddr, "http://"+healthAddr
	for _, c := range []struct {
		url  string
		code int
	}{
		{m + "/metrics", 200},
		{m + "/debug/pprof/", 200},
		{m + "/healthz", 200},
		{h + "/healthz", 200},
		{h + "/metrics", 404},
		{h + "/debug/pprof/", 404},
	} {
		if code, _ := testcluster.HTTPGet(t, c.url); code != c.code {
			t.Errorf("%s = %d, want %d", c.url, code, c.code)
		}
	}
	if code, body := testcluster.HTTPGet(t, h+"/readyz"); code != 503 || body != "not ready: no rules loaded" {
		t.Errorf("/readyz not ready = %d %q", code, body)
	}
	rec.RulesLoaded(2)
	if _, body := testcluster.HTTPGet(t, m+"/metrics"); !strings.Contains(body, "kreact_rules_loaded 2") {
		t.Error("/metrics lacks kreact_rules_loaded 2")
	}
	if err := stop(); err != nil {
		t.Errorf("Start = %v", err)
	}
	// Start has returned: nothing listens any more.
	for _, addr := range []string{metricsAddr, healthAddr} {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			t.Errorf("%s still listening after Start returned", addr)
		}
	}
}

func TestServerOneAddressServesEverything(t *testing.T) {
	for _, c := range []struct {
		name string
		opts func(addr string) metrics.ServerOptions
	}{
		{"metrics address only", func(a string) metrics.ServerOptions { return metrics.ServerOptions{MetricsAddr: a, Pprof: true} }},
		{"probe address only", func(a string) metrics.ServerOptions { return metrics.ServerOptions{HealthAddr: a, Pprof: true} }},
		{"the same address twice", func(a string) metrics.ServerOptions {
			return metrics.ServerOptions{MetricsAddr: a, HealthAddr: a, Pprof: true}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := testcluster.FreeAddr(t)
			stop := serve(t, metrics.New(), c.opts(addr))
			defer stop()
			for _, path := range []string{"/metrics", "/healthz", "/debug/pprof/"} {
				if code, _ := testcluster.HTTPGet(t, "http://"+addr+path); code != 200 {
					t.Errorf("%s = %d, want 200", path, code)
				}
			}
		})
	}
}

func TestServerErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	metricsAddr := testcluster.FreeAddr(t)
	_, err = metrics.Listen(t.Context(), nil, metrics.ServerOptions{MetricsAddr: metricsAddr, HealthAddr: busy.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "health probe address") {
		t.Fatalf("Listen on a busy port = %v, want an error naming the health probe address", err)
	}
	// Nothing is left listening on the address that could be bound.
	ln, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		t.Errorf("the first address is still bound after the failure: %v", err)
	} else {
		_ = ln.Close()
	}
	if _, err := metrics.Listen(t.Context(), nil, metrics.ServerOptions{Pprof: true}); !errors.Is(err, metrics.ErrPprofWithoutAddress) {
		t.Errorf("pprof without an address = %v", err)
	}
	s, err := metrics.Listen(t.Context(), nil, metrics.ServerOptions{})
	if err != nil {
		t.Fatalf("no address = %v, want nil (nothing served)", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Errorf("Start with nothing to serve = %v", err)
	}
}

// The explain endpoint is served alone, on a loopback address only.
func TestServerExplainOnLoopbackOnly(t *testing.T) {
	explain := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("explained")) })
	for _, addr := range []string{":0", "0.0.0.0:0", "10.1.2.3:8083", "example.com:8083"} {
		if _, err := metrics.Listen(t.Context(), nil, metrics.ServerOptions{ExplainAddr: addr, Explain: explain}); !errors.Is(err, metrics.ErrExplainNotLoopback) {
			t.Errorf("explain address %s = %v, want ErrExplainNotLoopback", addr, err)
		}
	}
	metricsAddr, explainAddr := testcluster.FreeAddr(t), testcluster.FreeAddr(t)
	stop := serve(t, metrics.New(), metrics.ServerOptions{MetricsAddr: metricsAddr, ExplainAddr: explainAddr, Explain: explain})
	defer stop()
	if code, body := testcluster.HTTPGet(t, "http://"+explainAddr+"/explain"); code != 200 || body != "explained" {
		t.Errorf("/explain = %d %q", code, body)
	}
	if code, _ := testcluster.HTTPGet(t, "http://"+metricsAddr+"/explain"); code == 200 {
		t.Errorf("the metrics address serves /explain")
	}
}
