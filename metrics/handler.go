package metrics

import (
	"io"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HandlerOptions configure Handler. The zero value serves /healthz, /readyz
// (always ready) and, given a Recorder, /metrics.
type HandlerOptions struct {
	// Ready reports whether the process is ready to do its job: nil error
	// for ready, else the reason it is not, which /readyz returns with 503.
	// It is called on every /readyz request and must be cheap and safe for
	// concurrent use. Nil means always ready.
	Ready func() error
	// Pprof also serves net/http/pprof under /debug/pprof/. False serves
	// nothing there: profiles expose internals and cost CPU, so they are
	// opt-in.
	Pprof bool
}

// Handler returns the HTTP handler of kreact's operational endpoints:
//
//	/metrics         the Recorder's registry in the Prometheus formats (not served if rec is nil)
//	/healthz         200 "ok" while the process serves HTTP (liveness)
//	/readyz          200 "ok" once opts.Ready returns nil, 503 with the reason before
//	/debug/pprof/    the Go profiler, only with opts.Pprof
//
// Any other path is 404.
func Handler(rec *Recorder, opts HandlerOptions) http.Handler {
	mux := http.NewServeMux()
	if rec != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(rec.registry, promhttp.HandlerOpts{
			ErrorHandling:     promhttp.ContinueOnError,
			EnableOpenMetrics: true,
		}))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if opts.Ready != nil {
			if err := opts.Ready(); err != nil {
				writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
				return
			}
		}
		writeText(w, http.StatusOK, "ok")
	})
	if opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}
