package cmdline

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// klog's logger is global, and a client-go goroutine may still read it
// after the command that started it has returned (a reflector's list in
// flight when its informer stopped). So it is set once per process, to a
// handler that forwards to the handler of the command running now, swapped
// atomically (tests run many commands in one process).
var (
	klogOnce    sync.Once
	klogCurrent atomic.Pointer[slog.Handler]
)

// routeKlog sends client-go's klog output to h from now on.
func routeKlog(h slog.Handler) {
	klogCurrent.Store(&h)
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(swapHandler{})) })
}

// swapHandler forwards to the handler routeKlog stored last, with the
// attributes and groups added through it.
type swapHandler struct {
	with func(slog.Handler) slog.Handler // nil: none
}

func (s swapHandler) target() slog.Handler {
	h := *klogCurrent.Load()
	if s.with != nil {
		h = s.with(h)
	}
	return h
}

func (s swapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.target().Enabled(ctx, l)
}

// Handle prints client-go's verbosity levels as DEBUG with v=N: logr
// maps klog's V(N) to slog level -N, which slog prints as DEBUG+(4-N).
// It drops the reflector's line that WatchList is disabled, "not
// expected in production": package dynamicinformer turns it off on
// purpose.
func (s swapHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, watchListOff) {
		return nil
	}
	if r.Level < slog.LevelInfo {
		v := -int(r.Level)
		r = r.Clone()
		r.Level = slog.LevelDebug
		r.AddAttrs(slog.Int("v", v))
	}
	return s.target().Handle(ctx, r)
}

// watchListOff begins client-go's line about a reflector whose client
// does not support WatchList (tools/cache/reflector.go).
const watchListOff = "The client used to build this informer/reflector doesn't support WatchList semantics."

func (s swapHandler) then(f func(slog.Handler) slog.Handler) swapHandler {
	prev := s.with
	return swapHandler{with: func(h slog.Handler) slog.Handler {
		if prev != nil {
			h = prev(h)
		}
		return f(h)
	}}
}

func (s swapHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return s.then(func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

func (s swapHandler) WithGroup(name string) slog.Handler {
	return s.then(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}
