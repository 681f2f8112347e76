package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kreact/kreact/engine"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// idleEngine is an engine with no rules, which reports synced.
func idleEngine() *engine.Engine {
	return engine.New(nil, nil, nil, nil, engine.Options{})
}

func TestServeSplitsMetricsAndProbes(t *testing.T) {
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	s := serveFlags{metricsAddr: metricsAddr, healthAddr: healthAddr, pprof: true}
	obs := newObserver()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := s.start(ctx, slog.New(slog.DiscardHandler), obs, idleEngine()); err != nil {
		t.Fatal(err)
	}
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
		if code, _ := httpGet(t, c.url); code != c.code {
			t.Errorf("%s = %d, want %d", c.url, code, c.code)
		}
	}
	if code, body := httpGet(t, h+"/readyz"); code != 503 || body != "not ready: no rules loaded" {
		t.Errorf("/readyz with no rules = %d %q", code, body)
	}
	obs.rulesLoaded(2)
	if code, _ := httpGet(t, h+"/readyz"); code != 200 {
		t.Errorf("/readyz with rules loaded and synced = %d, want 200", code)
	}
	if _, body := httpGet(t, m+"/metrics"); !strings.Contains(body, "kreact_rules_loaded 2") {
		t.Error("/metrics lacks kreact_rules_loaded 2")
	}

	cancel()
	if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, addr := range []string{metricsAddr, healthAddr} {
			if c, err := net.Dial("tcp", addr); err == nil {
				_ = c.Close()
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Error("still listening after the context ended")
	}
}

func TestServeOneAddressServesEverything(t *testing.T) {
	for _, c := range []struct {
		name string
		s    func(addr string) serveFlags
	}{
		{"metrics address only", func(a string) serveFlags { return serveFlags{metricsAddr: a, pprof: true} }},
		{"probe address only", func(a string) serveFlags { return serveFlags{healthAddr: a, pprof: true} }},
		{"the same address twice", func(a string) serveFlags { return serveFlags{metricsAddr: a, healthAddr: a, pprof: true} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := freeAddr(t)
			s := c.s(addr)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if err := s.start(ctx, slog.New(slog.DiscardHandler), newObserver(), idleEngine()); err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/metrics", "/healthz", "/debug/pprof/"} {
				if code, _ := httpGet(t, "http://"+addr+path); code != 200 {
					t.Errorf("%s = %d, want 200", path, code)
				}
			}
		})
	}
}

func TestServeErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	metricsAddr := freeAddr(t)
	s := serveFlags{metricsAddr: metricsAddr, healthAddr: busy.Addr().String()}
	err = s.start(t.Context(), slog.New(slog.DiscardHandler), newObserver(), idleEngine())
	if err == nil || !strings.Contains(err.Error(), "--health-probe-bind-address") {
		t.Fatalf("start on a busy port = %v, want an error naming --health-probe-bind-address", err)
	}
	// Nothing is left listening on the address that could be bound.
	ln, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		t.Errorf("the first address is still bound after the failure: %v", err)
	} else {
		_ = ln.Close()
	}

	s = serveFlags{pprof: true}
	var ue *usageError
	if err := s.start(t.Context(), slog.New(slog.DiscardHandler), newObserver(), idleEngine()); !errors.As(err, &ue) {
		t.Errorf("--pprof without an address = %v, want a usage error", err)
	}
	if err := (&serveFlags{}).start(t.Context(), slog.New(slog.DiscardHandler), newObserver(), idleEngine()); err != nil {
		t.Errorf("no address = %v, want nil (nothing served)", err)
	}
}

func TestObserverReadiness(t *testing.T) {
	obs := newObserver()
	eng := idleEngine()
	if err := obs.ready(eng); err == nil || err.Error() != "no rules loaded" {
		t.Errorf("ready with no rules = %v", err)
	}
	if err := obs.ready(nil); err == nil {
		t.Error("ready without an engine = nil, want an error")
	}
	obs.setLeading(false)
	if err := obs.ready(nil); err != nil {
		t.Errorf("a standby is ready; got %v", err)
	}
	obs.setLeading(true)
	if err := obs.ready(eng); err == nil {
		t.Error("a new leader with no rules loaded is ready")
	}
	obs.rulesLoaded(1)
	if err := obs.ready(eng); err != nil {
		t.Errorf("leader with rules loaded and synced: %v", err)
	}
}
