package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kreact/kreact/metrics"
)

// serveFlags configure the metrics and health endpoints.
type serveFlags struct {
	metricsAddr string
	healthAddr  string
	pprof       bool
}

func (s *serveFlags) register(fs *flagSet) {
	fs.StringVarP(&s.metricsAddr, "metrics-bind-address", "", "",
		"address for /metrics (and /debug/pprof with --pprof), e.g. :8080; it answers /healthz and /readyz too, so one address is enough (empty disables)")
	fs.StringVarP(&s.healthAddr, "health-probe-bind-address", "", "",
		"address for /healthz and /readyz only, e.g. :8081; given alone (or equal to the metrics address) it serves /metrics too (empty disables)")
	fs.BoolVarP(&s.pprof, "pprof", "", false,
		"serve /debug/pprof/ on the metrics address, or on the only address given")
}

// listen binds the configured addresses (an address that cannot be
// bound is an error, and nothing is left listening) and returns the
// endpoints' server, which serves from Start until its context ends.
func (s *serveFlags) listen(ctx context.Context, logger *slog.Logger, rec *metrics.Recorder, ready func() error) (*metrics.Server, error) {
	srv, err := metrics.Listen(ctx, rec, metrics.ServerOptions{
		MetricsAddr: s.metricsAddr, HealthAddr: s.healthAddr, Pprof: s.pprof,
		Ready: ready, Logger: logger,
	})
	switch {
	case errors.Is(err, metrics.ErrPprofWithoutAddress):
		return nil, &usageError{Msg: "run: --pprof needs --metrics-bind-address"}
	case err != nil:
		return nil, fmt.Errorf("run: %w", err)
	}
	return srv, nil
}
