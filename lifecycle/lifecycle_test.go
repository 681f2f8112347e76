package lifecycle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/lifecycle"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// journal records what components do, in order.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.entries = append(j.entries, s)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

// component records its start and its stop, and runs until ctx ends.
func component(j *journal, name string, started chan<- struct{}) lifecycle.Func {
	return func(ctx context.Context) error {
		j.add("start " + name)
		if started != nil {
			close(started)
		}
		<-ctx.Done()
		j.add("stop " + name)
		return ctx.Err()
	}
}

// readyComponent is a component that is ready once ready is closed.
type readyComponent struct {
	lifecycle.Func
	ready chan struct{}
}

func (r readyComponent) Ready() <-chan struct{} { return r.ready }

func TestGroupReturnsWhenAllHaveStopped(t *testing.T) {
	j := &journal{}
	a, b := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- lifecycle.Group{component(j, "a", a), component(j, "b", b)}.Start(ctx) }()
	<-a
	<-b
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v, want nil (context.Canceled is left out)", err)
	}
	got := j.list()
	slices.Sort(got)
	if want := []string{"start a", "start b", "stop a", "stop b"}; !slices.Equal(got, want) {
		t.Errorf("journal %v, want %v", got, want)
	}
}

func TestGroupStopsOnAnError(t *testing.T) {
	j := &journal{}
	boom := errors.New("boom")
	a := make(chan struct{})
	err := lifecycle.Group{
		component(j, "a", a),
		lifecycle.Func(func(context.Context) error { <-a; return boom }),
		lifecycle.Func(func(context.Context) error { return nil }), // done early: no reason to stop
	}.Start(t.Context())
	if !errors.Is(err, boom) {
		t.Errorf("Start = %v, want boom", err)
	}
	if got := j.list(); !slices.Equal(got, []string{"start a", "stop a"}) {
		t.Errorf("journal %v: a was not stopped by the error", got)
	}
}

func TestEmptyGroupAndLayersReturnAtOnce(t *testing.T) {
	if err := (lifecycle.Group{}).Start(t.Context()); err != nil {
		t.Error(err)
	}
	if err := (lifecycle.Layers{}).Start(t.Context()); err != nil {
		t.Error(err)
	}
}

func TestLayersStartBottomUpAndStopTopDown(t *testing.T) {
	j := &journal{}
	ready, memberStarted := make(chan struct{}), make(chan struct{})
	top := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	base := lifecycle.Group{
		component(j, "informers", nil),
		readyComponent{Func: func(ctx context.Context) error {
			j.add("start membership")
			close(memberStarted)
			<-ctx.Done()
			j.add("stop membership")
			return nil
		}, ready: ready},
	}
	go func() {
		done <- lifecycle.Layers{base, lifecycle.Group{component(j, "rules", top)}}.Start(ctx)
	}()
	<-memberStarted
	// The top layer waits for the membership to be ready: the rules
	// start only after ready is closed (checked on the journal below).
	j.add("membership ready")
	close(ready)
	<-top
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v", err)
	}
	got := j.list()
	stopRules := slices.Index(got, "stop rules")
	for _, under := range []string{"stop informers", "stop membership"} {
		if i := slices.Index(got, under); i < stopRules {
			t.Errorf("journal %v: %q before the rules stopped", got, under)
		}
	}
	if slices.Index(got, "start rules") < slices.Index(got, "membership ready") {
		t.Errorf("journal %v: the rules started before the layer under them was ready", got)
	}
}

func TestLayersStopWhenTheTopReturns(t *testing.T) {
	j := &journal{}
	invalid := errors.New("no valid rule")
	err := lifecycle.Layers{
		component(j, "informers", nil),
		lifecycle.Func(func(context.Context) error { return invalid }),
	}.Start(t.Context())
	if !errors.Is(err, invalid) {
		t.Errorf("Start = %v, want the top layer's error", err)
	}
	if got := j.list(); !slices.Equal(got, []string{"start informers", "stop informers"}) {
		t.Errorf("journal %v", got)
	}
}

func TestLayersStopWhenTheBaseFails(t *testing.T) {
	j := &journal{}
	broken := errors.New("discovery failed")
	rules := make(chan struct{})
	err := lifecycle.Layers{
		lifecycle.Func(func(context.Context) error { <-rules; return broken }),
		component(j, "rules", rules),
	}.Start(t.Context())
	if !errors.Is(err, broken) {
		t.Errorf("Start = %v, want the base's error", err)
	}
	if got := j.list(); !slices.Equal(got, []string{"start rules", "stop rules"}) {
		t.Errorf("journal %v", got)
	}
}

func TestLayersBaseStoppingBeforeReady(t *testing.T) {
	broken := errors.New("no lease")
	never := make(chan struct{})
	err := lifecycle.Layers{
		readyComponent{Func: func(context.Context) error { return broken }, ready: never},
		lifecycle.Func(func(context.Context) error { t.Error("the top layer started"); return nil }),
	}.Start(t.Context())
	if !errors.Is(err, broken) {
		t.Errorf("Start = %v, want the base's error", err)
	}
}

func TestLayersCancelledWhileWaitingForReady(t *testing.T) {
	never := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- lifecycle.Layers{
			readyComponent{Func: func(ctx context.Context) error { close(started); <-ctx.Done(); return ctx.Err() }, ready: never},
			lifecycle.Func(func(context.Context) error { t.Error("the top layer started"); return nil }),
		}.Start(ctx)
	}()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v, want nil", err)
	}
}

// TestInterruptibleEndsWithTheContext: a load that never finishes does
// not keep a signal waiting.
func TestInterruptibleEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	block := make(chan struct{})
	defer close(block)
	done := make(chan error, 1)
	go func() {
		_, err := lifecycle.Interruptible(ctx, "loading", func() int { <-block; return 1 })
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "loading: interrupted") {
			t.Fatalf("err = %v, want loading: interrupted: context canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Interruptible waits for f after its context ended")
	}
	if v, err := lifecycle.Interruptible(t.Context(), "loading", func() int { return 7 }); v != 7 || err != nil {
		t.Fatalf("= %d, %v; want 7, nil", v, err)
	}
}

func TestSleep(t *testing.T) {
	if !lifecycle.Sleep(t.Context(), time.Millisecond) {
		t.Error("Sleep did not report a whole wait")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if lifecycle.Sleep(ctx, time.Hour) {
		t.Error("Sleep reported a whole hour on an ended context")
	}
}
