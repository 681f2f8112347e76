package reload

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/source"
)

// Rules is the rule set of kreact run as a lifecycle component: Start
// loads the rules into the engine and logs each problem, waits for their
// caches to sync, then reloads them whenever their files change (Loop)
// until its context ends.
type Rules struct {
	Engine Engine
	// Informers reports the watches, for the wait for the caches
	// (dynamicinformer.Manager.Status). Required.
	Informers func() []dynamicinformer.WatchStatus
	// Rules and Failed are what rules.LoadEach returned for Options.Paths:
	// the rules of the files that loaded, and the files that did not.
	Rules  []*rules.Rule
	Failed []string
	// Options are Loop's; an Interval of zero never reloads. Their
	// Reloaded, if set, is called after each reload has been logged.
	Options Options
	// Loaded, if set, is told the number of rules running after the
	// first load and after each reload.
	Loaded func(running int)
	// Attrs are logged with the "rules loaded" line.
	Attrs []any
	// Elsewhere, if set, counts the rules of the last load that another
	// process runs (isolation.Split.HandedOver): they count as running
	// for Loaded and for the NoRulesError, and are logged as
	// isolatedRules.
	Elsewhere func() int
	// Logger receives the loads' lines. Nil means slog.Default().
	Logger *slog.Logger
}

// Engine is what Rules runs the rules in: engine.Engine.
type Engine interface {
	Loader
	Status() []engine.Status
}

// NoRulesError is what Start returns when no rule runs: the problems of
// every rule, which an exit code should tell from a failure to run.
type NoRulesError struct{ Err error }

func (e *NoRulesError) Error() string { return e.Err.Error() }
func (e *NoRulesError) Unwrap() error { return e.Err }

// Start runs the rule set until ctx ends, and returns a NoRulesError if no
// rule could be loaded.
func (r *Rules) Start(ctx context.Context) error {
	logger := r.Logger
	if logger == nil {
		logger = slog.Default()
	}
	loadErr := r.Engine.Load(ctx, r.Rules, r.Failed...)
	if ctx.Err() != nil {
		return nil // stopping while the rules load
	}
	source.Log(logger, "rules with errors are not running", loadErr)
	n := r.running()
	if loadErr != nil && n+r.elsewhere() == 0 {
		return &NoRulesError{loadErr}
	}
	r.loaded(n)
	attrs := append(r.counts(n), "files", strings.Join(r.Options.Paths, ","))
	logger.Info("rules loaded", append(attrs, r.Attrs...)...)
	// The "caches synced" line: every 100ms a look, every 3s a report.
	engine.WaitForSync(ctx, logger, engine.SyncView{Rules: r.Engine.Status, Informers: r.Informers}, 100*time.Millisecond, 3*time.Second)
	if r.Options.Interval > 0 {
		opts := r.Options
		opts.Reloaded = func(err error) {
			n := r.running()
			r.loaded(n)
			if err != nil {
				source.Log(logger, "reload: rules with errors keep their previous version", err)
			} else {
				logger.Info("rules reloaded", r.counts(n)...)
			}
			if r.Options.Reloaded != nil {
				r.Options.Reloaded(err)
			}
		}
		Loop(ctx, r.Engine, opts)
	}
	<-ctx.Done()
	logger.Info("shutting down: finishing queued changes and actions")
	return nil
}

// running counts the rules the engine runs or keeps waiting for resources.
func (r *Rules) running() int { return len(r.Engine.Status()) }

func (r *Rules) loaded(n int) {
	if r.Loaded != nil {
		r.Loaded(n + r.elsewhere())
	}
}

func (r *Rules) elsewhere() int {
	if r.Elsewhere == nil {
		return 0
	}
	return r.Elsewhere()
}

// counts are the attributes that count the rules: those n running here,
// and those running elsewhere where there can be any.
func (r *Rules) counts(n int) []any {
	if r.Elsewhere == nil {
		return []any{"rules", n}
	}
	return []any{"rules", n, "isolatedRules", r.Elsewhere()}
}
