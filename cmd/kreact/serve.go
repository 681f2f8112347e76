package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/scripting"
)

// serveFlags configure the metrics and health endpoints.
type serveFlags struct {
	metricsAddr string
	healthAddr  string
	pprof       bool
}

func (s *serveFlags) register(fs *flagSet) {
	fs.stringVar(&s.metricsAddr, "metrics-bind-address", "", "",
		"address for /metrics (and /debug/pprof with --pprof), e.g. :8080; it answers /healthz and /readyz too, so one address is enough (empty disables)")
	fs.stringVar(&s.healthAddr, "health-probe-bind-address", "", "",
		"address for /healthz and /readyz only, e.g. :8081; given alone (or equal to the metrics address) it serves /metrics too (empty disables)")
	fs.boolVar(&s.pprof, "pprof", "", false,
		"serve /debug/pprof/ on the metrics address, or on the only address given")
}

// shutdownGrace bounds how long the endpoints wait for requests in flight
// when the process stops.
const shutdownGrace = 5 * time.Second

// start listens on the configured addresses and returns at once; the
// endpoints are served until ctx ends. An address that cannot be bound is
// an error, and then nothing is left listening.
//
// The layout: with both addresses, the metrics address serves everything
// (/metrics, the probes and, with --pprof, /debug/pprof/) and the probe
// address serves /healthz and /readyz only; with one address (or the same
// one twice), it serves everything.
func (s *serveFlags) start(ctx context.Context, logger *slog.Logger, obs *observer, eng *engine.Engine) error {
	ready := func() error { return obs.ready(eng) }
	type endpoint struct {
		addr, flag string
		handler    http.Handler
		serves     string
	}
	var eps []endpoint
	switch {
	case s.metricsAddr == "" && s.healthAddr == "":
		if s.pprof {
			return &usageError{"run: --pprof needs --metrics-bind-address"}
		}
		return nil
	case s.metricsAddr != "" && s.healthAddr != "" && s.metricsAddr != s.healthAddr:
		eps = append(eps,
			endpoint{s.metricsAddr, "metrics-bind-address", metrics.Handler(obs.rec, metrics.HandlerOptions{Ready: ready, Pprof: s.pprof}), servesList(true, s.pprof)},
			endpoint{s.healthAddr, "health-probe-bind-address", metrics.Handler(nil, metrics.HandlerOptions{Ready: ready}), "/healthz,/readyz"})
	default:
		addr, flag := s.metricsAddr, "metrics-bind-address"
		if addr == "" {
			addr, flag = s.healthAddr, "health-probe-bind-address"
		}
		eps = append(eps, endpoint{addr, flag, metrics.Handler(obs.rec, metrics.HandlerOptions{Ready: ready, Pprof: s.pprof}), servesList(true, s.pprof)})
	}

	listeners := make([]net.Listener, 0, len(eps))
	for _, ep := range eps {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", ep.addr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return fmt.Errorf("--%s: %w", ep.flag, err)
		}
		listeners = append(listeners, ln)
	}
	for i, ep := range eps {
		ln := listeners[i]
		srv := &http.Server{
			Handler:           ep.handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("serving stopped", "address", ln.Addr().String(), "error", err)
			}
		}()
		context.AfterFunc(ctx, func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
			defer cancel()
			_ = srv.Shutdown(sctx)
		})
		logger.Info("serving", "address", ln.Addr().String(), "paths", ep.serves)
	}
	return nil
}

func servesList(metrics, pprof bool) string {
	paths := []string{"/healthz", "/readyz"}
	if metrics {
		paths = append([]string{"/metrics"}, paths...)
	}
	if pprof {
		paths = append(paths, "/debug/pprof/")
	}
	return strings.Join(paths, ",")
}

// The observer's leadership states.
const (
	alone    int32 = iota // leader election off (or not started yet): readiness follows the engine
	standing              // campaigning for the lease, not running rules
	leading               // holding the lease, running rules
)

// observer counts what the engine does (it is the engine's Observer and the
// action queues' MetricsProvider) and knows what readiness needs: how many
// rules are loaded and whether this replica leads. Its methods are safe for
// concurrent use.
type observer struct {
	rec        *metrics.Recorder
	rules      atomic.Int64
	leadership atomic.Int32
}

var _ engine.Observer = (*observer)(nil)

func newObserver() *observer { return &observer{rec: metrics.New()} }

func (o *observer) Event(rule, resource string, event scripting.EventType) {
	o.rec.Event(rule, resource, event)
}

func (o *observer) HandlerCall(rule string, event scripting.EventType, d time.Duration, err error) {
	o.rec.HandlerCall(rule, event, d, err)
}

func (o *observer) HandlerGivenUp(rule string, event scripting.EventType, err error) {
	o.rec.HandlerGivenUp(rule, event, err)
}

func (o *observer) ChangesDropped(rule string, n int) { o.rec.ChangesDropped(rule, n) }

func (o *observer) ActionResult(r actions.Result) { o.rec.ActionResult(r) }

// rulesLoaded records the size of the rule set just loaded.
func (o *observer) rulesLoaded(n int) {
	o.rules.Store(int64(n))
	o.rec.RulesLoaded(n)
}

// reloadFailed counts a reload that was refused.
func (o *observer) reloadFailed() { o.rec.ReloadFailed() }

// setLeading records whether this replica runs the rules (true) or stands
// by for the lease (false). leaderFlags.notify takes it.
func (o *observer) setLeading(lead bool) {
	if lead {
		o.leadership.Store(leading)
	} else {
		o.leadership.Store(standing)
	}
	o.rec.Leading(lead)
}

func (o *observer) workqueueProvider() workqueue.MetricsProvider { return o.rec }

// watchInformers reports the informers' state on every scrape; status is
// typically stack.Informers.Status.
func (o *observer) watchInformers(status func() []dynamicinformer.WatchStatus) {
	o.rec.WatchInformers(status)
}

// watchFinalizers reports what waits on the rules' finalizers on every
// scrape; status is typically eng.Finalizing.
func (o *observer) watchFinalizers(status func() []engine.Finalizing) {
	o.rec.WatchFinalizers(status)
}

// ready is /readyz: a replica standing by for the lease is ready (it is
// healthy and waiting, and a rolling update must be able to proceed past
// it); otherwise at least one rule must be loaded and every running rule
// must have caught up with its watches (rulesBehind, the test kreact run's
// "caches synced" line waits for, so the two never disagree).
func (o *observer) ready(eng *engine.Engine) error {
	if o.leadership.Load() == standing {
		return nil
	}
	if eng == nil {
		return errors.New("engine not started")
	}
	if o.rules.Load() == 0 {
		return errors.New("no rules loaded")
	}
	if behind := rulesBehind(eng.Status()); len(behind) > 0 {
		return fmt.Errorf("waiting for caches to sync: rules %s", strings.Join(behind, ", "))
	}
	return nil
}
