package metrics_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/kreact/kreact/metrics"
)

// A Recorder is given to the engine as its Observer and MetricsProvider;
// Handler serves it with the probes.
func ExampleHandler() {
	rec := metrics.New()
	// engine.New(..., engine.Options{Observer: rec, MetricsProvider: rec})
	// rec.WatchInformers(stack.Informers.Status)
	var synced atomic.Bool
	srv := httptest.NewServer(metrics.Handler(rec, metrics.HandlerOptions{
		Ready: func() error {
			if !synced.Load() {
				return errors.New("caches not synced")
			}
			return nil
		},
	}))
	defer srv.Close()

	show := func(path string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%s %d %s\n", path, resp.StatusCode, body)
	}
	show("/healthz")
	show("/readyz")
	synced.Store(true)
	show("/readyz")
	// Output:
	// /healthz 200 ok
	// /readyz 503 not ready: caches not synced
	// /readyz 200 ok
}
