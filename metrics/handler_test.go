package metrics_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kreact/kreact/metrics"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestHandlerEndpoints(t *testing.T) {
	rec := metrics.New()
	rec.ReloadFailed()
	var notReady atomic.Pointer[error]
	reason := errors.New("waiting for caches to sync: rules labeler")
	notReady.Store(&reason)
	srv := httptest.NewServer(metrics.Handler(rec, metrics.HandlerOptions{Ready: func() error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	}}))
	defer srv.Close()

	if code, body := get(t, srv.URL+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz = %d %q, want 200 \"ok\"", code, body)
	}
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, reason.Error()) {
		t.Errorf("/readyz before ready = %d %q, want 503 with the reason", code, body)
	}
	notReady.Store(nil)
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz when ready = %d %q, want 200 \"ok\"", code, body)
	}
	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "kreact_rule_reload_failures_total 1\n") {
		t.Errorf("/metrics = %d, want 200 with kreact_rule_reload_failures_total 1; body:\n%s", code, body)
	}
	if !strings.Contains(body, "go_goroutines ") || !strings.Contains(body, "process_") {
		t.Error("/metrics lacks the Go runtime or process collectors")
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine", "/", "/metricsx"} {
		if code, _ := get(t, srv.URL+path); code != http.StatusNotFound {
			t.Errorf("%s = %d without Pprof, want 404", path, code)
		}
	}
}

func TestHandlerPprofIsOptIn(t *testing.T) {
	srv := httptest.NewServer(metrics.Handler(nil, metrics.HandlerOptions{Pprof: true}))
	defer srv.Close()
	if code, body := get(t, srv.URL+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ = %d, want 200 with the profile index", code)
	}
	if code, _ := get(t, srv.URL+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK {
		t.Errorf("/debug/pprof/goroutine = %d, want 200", code)
	}
	// Without a Recorder: probes only, and ready when Ready is nil.
	if code, _ := get(t, srv.URL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics without a Recorder = %d, want 404", code)
	}
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz with nil Ready = %d %q, want 200 \"ok\"", code, body)
	}
}
