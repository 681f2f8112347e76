package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Runnable is a long-lived component. Start runs it until ctx ends, or
// until it cannot go on, and returns only once everything it started has
// stopped. A Runnable is started at most once.
type Runnable interface {
	Start(ctx context.Context) error
}

// Func is a function that is a Runnable.
type Func func(ctx context.Context) error

// Start calls f.
func (f Func) Start(ctx context.Context) error { return f(ctx) }

// Readier is a Runnable that the layer above it must wait for, such as a
// shard membership that must know its range before informers list. Ready
// returns a channel that is closed once the component is ready; it may be
// called before Start.
type Readier interface {
	Ready() <-chan struct{}
}

// Group runs its Runnables side by side. Start starts each in a goroutine
// and returns when all have returned. The first that returns an error ends
// the context of the others; one that returns nil leaves the others
// running. An empty Group returns nil at once.
type Group []Runnable

var _ Runnable = Group(nil)

// Start runs the group; see Group. The error joins the Runnables' errors,
// without context.Canceled.
func (g Group) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, r := range g {
		wg.Go(func() {
			if err := r.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Layers runs Runnables stacked on each other, the first at the bottom.
// Each layer starts once the one below it is ready (every Readier in it,
// at any depth of Groups, has closed its channel) and stops before it:
// when ctx ends or any layer returns, the layers are stopped from the top
// down, each once the one above it has returned. Start returns when every
// layer has returned. Empty Layers return nil at once.
type Layers []Runnable

var _ Runnable = Layers(nil)

// Start runs the layers; see Layers. The error joins the layers' errors,
// without context.Canceled.
func (ls Layers) Start(ctx context.Context) error {
	if len(ls) == 0 {
		return nil
	}
	return withoutCanceled(startLayers(ctx, ls))
}

func startLayers(ctx context.Context, ls []Runnable) error {
	base, upper := ls[0], ls[1:]
	if len(upper) == 0 {
		return base.Start(ctx)
	}
	// The base outlives ctx until the layers above it have returned.
	baseCtx, stopBase := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBase()
	baseDone := make(chan error, 1)
	go func() { baseDone <- base.Start(baseCtx) }()

	for _, ready := range readyChannels(base) {
		select {
		case <-ready:
		case err := <-baseDone:
			return err // it stopped before it was ready: nothing to stand on
		case <-ctx.Done():
			stopBase()
			return <-baseDone
		}
	}

	upperCtx, stopUpper := context.WithCancel(ctx)
	defer stopUpper()
	upperDone := make(chan error, 1)
	go func() { upperDone <- startLayers(upperCtx, upper) }()
	var upperErr, baseErr error
	select {
	case upperErr = <-upperDone:
		stopBase()
		baseErr = <-baseDone
	case baseErr = <-baseDone:
		stopUpper()
		upperErr = <-upperDone
	}
	return errors.Join(withoutCanceled(upperErr), withoutCanceled(baseErr))
}

// readyChannels returns the Ready channels of r and, if r is a Group or
// Layers, of what it holds.
func readyChannels(r Runnable) []<-chan struct{} {
	var out []<-chan struct{}
	switch r := r.(type) {
	case Group:
		for _, x := range r {
			out = append(out, readyChannels(x)...)
		}
	case Layers:
		for _, x := range r {
			out = append(out, readyChannels(x)...)
		}
	case Readier:
		out = append(out, r.Ready())
	}
	return out
}

// withoutCanceled drops context.Canceled from err, alone or joined.
func withoutCanceled(err error) error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var keep []error
		for _, e := range joined.Unwrap() {
			if e = withoutCanceled(e); e != nil {
				keep = append(keep, e)
			}
		}
		return errors.Join(keep...)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Interruptible returns f's result, or an error as soon as ctx ends (on
// SIGINT or SIGTERM). It is for work that cannot stop midway, such as
// loading a rule file (a YAML document being decoded, a script being
// compiled), which a signal must not wait for: f is then left to finish in
// the background and its result is dropped. It is the one exception to
// this package's rule that nothing outlives its caller, and is meant for
// a process about to exit.
func Interruptible[T any](ctx context.Context, what string, f func() T) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: interrupted: %w", what, context.Cause(ctx))
	}
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: interrupted: %w", what, context.Cause(ctx))
	}
}

// Sleep waits for d, or until ctx ends; it reports whether it waited the
// whole of d. The one sleep of every loop that waits between attempts.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
