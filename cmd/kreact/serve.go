package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// listen binds the configured addresses (an address that cannot be
// bound is an error, and nothing is left listening) and returns the
// endpoints' server, which serves from Start until its context ends.
func (s *serveFlags) listen(ctx context.Context, logger *slog.Logger, obs *observer, eng *engine.Engine) (*metrics.Server, error) {
	srv, err := metrics.Listen(ctx, obs.rec, metrics.ServerOptions{
		MetricsAddr: s.metricsAddr, HealthAddr: s.healthAddr, Pprof: s.pprof,
		Ready: func() error { return obs.ready(eng) }, Logger: logger,
	})
	switch {
	case errors.Is(err, metrics.ErrPprofWithoutAddress):
		return nil, &usageError{"run: --pprof needs --metrics-bind-address"}
	case err != nil:
		return nil, fmt.Errorf("run: %w", err)
	}
	return srv, nil
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
// by for the lease (false). leaderFlags.lead takes it.
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
// must have caught up with its watches (engine.RulesBehind, the test kreact run's
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
	if behind := engine.RulesBehind(eng.Status()); len(behind) > 0 {
		return fmt.Errorf("waiting for caches to sync: rules %s", strings.Join(behind, ", "))
	}
	return nil
}
