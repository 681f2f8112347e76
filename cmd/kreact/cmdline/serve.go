package cmdline

import (
	"context"
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
	// Explain is what ExplainAddr serves (explain.Handler); the command
	// sets it.
	Explain http.Handler
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

// Listen binds the configured addresses (an address that cannot be
// bound is an error, and nothing is left listening) and returns the
// endpoints' server, which serves from Start until its context ends.
func (s *ServeFlags) Listen(ctx context.Context, logger *slog.Logger, rec *metrics.Recorder, ready func() error) (*metrics.Server, error) {
	srv, err := metrics.Listen(ctx, rec, metrics.ServerOptions{
		MetricsAddr: s.MetricsAddr, HealthAddr: s.HealthAddr, Pprof: s.Pprof,
		ExplainAddr: s.ExplainAddr, Explain: s.Explain,
		Ready: ready, Logger: logger,
	})
	switch {
	case errors.Is(err, metrics.ErrPprofWithoutAddress):
		return nil, &UsageError{Msg: "run: --pprof needs --metrics-bind-address"}
	case errors.Is(err, metrics.ErrExplainNotLoopback):
		return nil, &UsageError{Msg: "run: --explain-address: " + err.Error()}
	case err != nil:
		return nil, fmt.Errorf("run: %w", err)
	}
	return srv, nil
}
