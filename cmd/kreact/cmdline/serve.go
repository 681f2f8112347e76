package cmdline

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kreact/kreact/metrics"
)

// ServeFlags configure the metrics and health endpoints.
type ServeFlags struct {
	MetricsAddr string
	HealthAddr  string
	Pprof       bool
	ExplainAddr string
}

// Register adds the endpoint flags to fs.
func (s *ServeFlags) Register(fs *FlagSet) {
	fs.StringVarP(&s.MetricsAddr, "metrics-bind-address", "", "",
		"address for /metrics (and /debug/pprof with --pprof), e.g. :8080; it answers /healthz and /readyz too, so one address is enough (empty disables)")
	fs.StringVarP(&s.HealthAddr, "health-probe-bind-address", "", "",
		"address for /healthz and /readyz only, e.g. :8081; given alone (or equal to the metrics address) it serves /metrics too (empty disables)")
	fs.BoolVarP(&s.Pprof, "pprof", "", false,
		"serve /debug/pprof/ on the metrics address, or on the only address given")
	fs.StringVarP(&s.ExplainAddr, "explain-address", "", "",
		"loopback address (127.0.0.1:PORT) where kreact explain asks this process why its rules acted or not; it also keeps a trace per rule of its latest objects (empty disables)")
}

// Options are the options of the endpoints' server (metrics.Listen):
// explain is what ExplainAddr serves (explain.Handler), ready is /readyz.
func (s *ServeFlags) Options(explain http.Handler, ready func() error, logger *slog.Logger) metrics.ServerOptions {
	return metrics.ServerOptions{
		MetricsAddr: s.MetricsAddr, HealthAddr: s.HealthAddr, Pprof: s.Pprof,
		ExplainAddr: s.ExplainAddr, Explain: explain,
		Ready: ready, Logger: logger,
	}
}

// ListenError is an error of metrics.Listen as kreact run reports it: a
// mistake in the flags is a UsageError.
func ListenError(err error) error {
	switch {
	case errors.Is(err, metrics.ErrPprofWithoutAddress):
		return &UsageError{Msg: "run: --pprof needs --metrics-bind-address"}
	case errors.Is(err, metrics.ErrExplainNotLoopback):
		return &UsageError{Msg: "run: --explain-address: " + err.Error()}
	}
	return fmt.Errorf("run: %w", err)
}
