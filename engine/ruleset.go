package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/rules"
)

// Rules is the rule set of kreact run as a lifecycle component: Start
// loads the rules into the engine and logs each problem, waits for their
// caches to sync, then reloads them whenever their files change (Loop)
// until its context ends.
type RuleSet struct {
	Engine StatusLoader
	// Informers reports the watches, for the wait for the caches
	// (dynamicinformer.Manager.Status). Required.
	Informers func() []dynamicinformer.WatchStatus
	// Rules, Failed and Err are what was read of Options.Paths
	// (RuleFiles): the rules to run, the files with problems, and their
	// problems. The caller reports Err; Start reports the problems that
	// the engine finds beside, and returns both in its NoRulesError when
	// no rule runs.
	Rules  []*rules.Rule
	Failed []string
	Err    error
	// Options are Loop's; an Interval of zero never reloads. Their
	// Reloaded, if set, is called after each reload has been logged.
	Options ReloadOptions
	// Loaded, if set, is told the number of rules running after the
	// first load and after each reload.
	Loaded func(running int)
	// Attrs are logged with the "rules loaded" line.
	Attrs []any
	// Elsewhere, if set, is the other process that runs some of the rules
	// (isolation.Supervisor): the rules it says it runs count as running,
	// for Loaded and for the NoRulesError, and are logged as
	// isolatedRules; Loaded is told again each time its count changes.
	Elsewhere Elsewhere
	// Logger receives the loads' lines. Nil means slog.Default().
	Logger *slog.Logger
}

// Engine is what Rules runs the rules in: Engine.
type StatusLoader interface {
	Loader
	Status() []Status
}

// Elsewhere is another process that runs some of the rules and says how
// many: isolation.Supervisor.
type Elsewhere interface {
	// Running is how many rules it runs, as it last said.
	Running() int
	// Heard waits until it has said how its first load went, if it was
	// asked to run any rule, and returns why none of its rules can run,
	// if it said so.
	Heard(ctx context.Context) error
	// Changed receives when Running may have changed (the other process
	// reported a load, or exited): the set then tells Loaded again.
	Changed() <-chan struct{}
}

// NoRulesError is what Start returns when no rule runs: the problems of
// every rule, which an exit code should tell from a failure to run.
type NoRulesError struct{ Err error }

func (e *NoRulesError) Error() string { return e.Err.Error() }
func (e *NoRulesError) Unwrap() error { return e.Err }

// Start runs the rule set until ctx ends, and returns a NoRulesError if no
// rule could be loaded.
func (r *RuleSet) Start(ctx context.Context) error {
	logger := r.Logger
	if logger == nil {
		logger = slog.Default()
	}
	loadErr := r.Engine.Load(ctx, r.Rules, r.Failed...)
	if ctx.Err() != nil {
		return nil // stopping while the rules load
	}
	diag.Log(logger, "rules with errors are not running", loadErr)
	var elsewhereErr error
	if r.Elsewhere != nil {
		// kreact run exits when none of its rules can run at its start,
		// wherever each was meant to run: the other process's first load
		// is part of that start.
		elsewhereErr = r.Elsewhere.Heard(ctx)
		if ctx.Err() != nil {
			return nil
		}
	}
	r.drainChanged() // the count below includes them
	n := r.running()
	if (r.Err != nil || loadErr != nil || elsewhereErr != nil) && n+r.elsewhere() == 0 {
		return &NoRulesError{errors.Join(r.Err, loadErr, elsewhereErr)}
	}
	r.loaded(n)
	if r.Elsewhere != nil {
		recounted := make(chan struct{})
		defer func() { <-recounted }()
		go func() {
			defer close(recounted)
			r.recount(ctx)
		}()
	}
	attrs := append(r.counts(n), "files", strings.Join(r.Options.Paths, ","))
	logger.Info("rules loaded", append(attrs, r.Attrs...)...)
	// The "caches synced" line: every 100ms a look, every 3s a report.
	WaitForSync(ctx, logger, SyncView{Rules: r.Engine.Status, Informers: r.Informers}, 100*time.Millisecond, 3*time.Second)
	if r.Options.Interval > 0 {
		opts := r.Options
		var changed map[string]bool
		opts.Changed = func(files map[string]bool) {
			changed = files
			if r.Options.Changed != nil {
				r.Options.Changed(files)
			}
		}
		opts.Reloaded = func(err error) {
			n := r.running()
			r.loaded(n)
			if err != nil {
				fresh, repeated := inChangedFiles(err, changed)
				diag.Log(logger, "reload: rules with errors keep their previous version", fresh)
				if repeated > 0 {
					logger.Warn("reload: errors of unchanged files, logged before, not repeated", "errors", repeated)
				}
			} else {
				logger.Info("rules reloaded", r.counts(n)...)
			}
			if r.Options.Reloaded != nil {
				r.Options.Reloaded(err)
			}
		}
		Reload(ctx, r.Engine, opts)
	}
	<-ctx.Done()
	logger.Info("shutting down: finishing queued changes and actions")
	return nil
}

// recount tells Loaded the number of rules running again each time
// Elsewhere's count changes, until ctx ends.
func (r *RuleSet) recount(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.Elsewhere.Changed():
			r.loaded(r.running())
		}
	}
}

// drainChanged forgets the changes Elsewhere announced so far.
func (r *RuleSet) drainChanged() {
	if r.Elsewhere == nil {
		return
	}
	for {
		select {
		case <-r.Elsewhere.Changed():
		default:
			return
		}
	}
}

// Recount tells Loaded the number of rules running now, after a load that
// did not go through the set (the rule objects', through another part of
// an engine.Combined).
func (r *RuleSet) Recount() { r.loaded(r.running()) }

// running counts the rules the engine runs or keeps waiting for resources.
func (r *RuleSet) running() int { return len(r.Engine.Status()) }

func (r *RuleSet) loaded(n int) {
	if r.Loaded != nil {
		r.Loaded(n + r.elsewhere())
	}
}

func (r *RuleSet) elsewhere() int {
	if r.Elsewhere == nil {
		return 0
	}
	return r.Elsewhere.Running()
}

// counts are the attributes that count the rules: those n running here,
// and those running elsewhere where there can be any.
func (r *RuleSet) counts(n int) []any {
	if r.Elsewhere == nil {
		return []any{"rules", n}
	}
	return []any{"rules", n, "isolatedRules", r.elsewhere()}
}

// inChangedFiles splits the problems of a reload: those to log, and how
// many are in files that have not changed since the last load (a file
// dropped beside hundreds of broken ones must not log them all again).
// A problem that names no file is always logged.
func inChangedFiles(err error, changed map[string]bool) (error, int) {
	var fresh []error
	repeated := 0
	for _, p := range diag.Problems(err) {
		if e, ok := p.(*diag.Error); ok && e.Pos.File != "" && !changed[e.Pos.File] {
			repeated++
			continue
		}
		fresh = append(fresh, p)
	}
	return errors.Join(fresh...), repeated
}
