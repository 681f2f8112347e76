package record

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
)

// RunOptions configure Run.
type RunOptions struct {
	// Options choose the objects recorded.
	Options
	// Refs are the resources as the user named them, for the logs.
	Refs []string
	// For, if positive, ends the recording after that long, if ctx has
	// not ended it before (kreact record --for).
	For time.Duration
	// Logger receives the recording's and the rules' logs. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// LoadError is Run's error when the rules do not load into the engine:
// a problem in what the user wrote.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Run is `kreact record`: it starts stack, watches the chosen objects of
// resources, runs rs on them in dry-run with package engine until ctx
// ends or opts.For has passed, and returns what it recorded once the
// rules have stopped (their changes and actions drained) and stack with
// them. The rules see only the recorded objects of the recorded
// resources, so that the case holds every change they acted on.
func Run(ctx context.Context, stack *clientstack.Stack, rs []*rules.Rule, resources []apiresource.Resource, opts RunOptions) (Recording, error) {
	if opts.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.For)
		defer cancel()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	rec, err := New(rs, opts.Options)
	if err != nil {
		return Recording{}, err
	}
	// The recorder's watches come first, whole objects, so that a rule's
	// narrower watch (spec.watch[].fields) never makes the shared
	// informer list again.
	for _, res := range resources {
		if err := rec.Watch(stack.Informers, res); err != nil {
			return Recording{}, err
		}
	}
	defer rec.Stop()
	eng := engine.New(stack.REST, stack.Mapper, rec.Scope(stack.Informers), stack.Discovery, engine.Options{DryRun: true, Logger: logger, Asked: rec.Asked, Observer: rec})
	load := func(ctx context.Context) error {
		rec.Begin()
		if err := eng.Load(ctx, rs); err != nil {
			return &LoadError{err}
		}
		for !rec.Synced() {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
			}
		}
		if rec.Objects() == 0 {
			logger.Warn("no object matches yet; recording the changes to come", "resources", strings.Join(opts.Refs, ","), "names", strings.Join(opts.Names, ","), "namespace", opts.Namespace, "selector", opts.LabelSelector)
		}
		logger.Info("recording; Ctrl-C writes the case", "objects", rec.Objects())
		<-ctx.Done()
		return nil
	}
	// The rules stop (their changes and actions drained) before the
	// recording is taken.
	if err := (lifecycle.Layers{stack, lifecycle.Group{lifecycle.Func(eng.Run), lifecycle.Func(load)}}).Start(ctx); err != nil {
		return Recording{}, err
	}
	return rec.Recording(), nil
}
