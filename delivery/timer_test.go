package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// Invoke makes the recording Callers of delivery_test.go Callers.
func (r *recorder) Invoke(ev event.Event) (event.Outcome, error) {
	a, err := r.Call(ev)
	return event.Outcome{Actions: a}, err
}

func (c *orderChecker) Invoke(ev event.Event) (event.Outcome, error) {
	a, err := c.Call(ev)
	return event.Outcome{Actions: a}, err
}

func (b *blocker) Invoke(ev event.Event) (event.Outcome, error) {
	a, err := b.Call(ev)
	return event.Outcome{Actions: a}, err
}

// timerCaller is a recorder whose calls ask for a timer: after[handler]
// is the delay each call of that handler asks for.
type timerCaller struct {
	*recorder
	after map[event.Type]time.Duration
}

func (c *timerCaller) Invoke(ev event.Event) (event.Outcome, error) {
	a, err := c.Call(ev)
	if err != nil {
		return event.Outcome{}, err
	}
	out := event.Outcome{Actions: a}
	if d, ok := c.after[ev.Type]; ok {
		out.Timer = &event.TimerRequest{Delay: d}
	}
	return out, nil
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// newClocked returns a Core on a fake clock at t0.
func newClocked(t *testing.T, r *rules.Rule, opts Options) (*Core, *testingclock.FakeClock, *recorder) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	rec := &recorder{}
	opts.Logger, opts.BaseDelay, opts.Clock = quiet(), -1, clk
	d := New(r, allHandlers{}, rec, opts)
	t.Cleanup(d.ShutDown)
	return d, clk, rec
}

// advance moves the clock by dt, stopping at each deadline on the way to
// make the calls due then, as kreact test does.
func advance(t *testing.T, d *Core, clk *testingclock.FakeClock, c Caller, dt time.Duration) {
	t.Helper()
	end := clk.Now().Add(dt)
	for range 1000 {
		next, ok := d.NextDue()
		if !ok || next.After(end) {
			break
		}
		if next.After(clk.Now()) {
			clk.SetTime(next)
		}
		d.Fire()
		d.Drain(t.Context(), c)
	}
	clk.SetTime(end)
	d.Fire()
	d.Drain(t.Context(), c)
}

func TestTimers(t *testing.T) {
	a1, a2 := cm("a", "1"), cm("a", "2")
	tests := []struct {
		name  string
		after map[event.Type]time.Duration
		steps func(observe func(Change), step func(time.Duration))
		want  []string
	}{
		{
			name:  "onTimer gets the latest state when it is due",
			after: map[event.Type]time.Duration{event.Add: 10 * time.Minute},
			steps: func(observe func(Change), step func(time.Duration)) {
				observe(add(a1))
				step(5 * time.Minute)
				observe(update(a1, a2))
				step(4 * time.Minute)
				step(time.Minute)
				step(time.Hour)
			},
			want: []string{"onAdd(a=1)", "step 5m0s", "onUpdate(a=1->a=2)[data.v]", "step 4m0s", "onTimer(a=2)", "step 1m0s", "step 1h0m0s"},
		},
		{
			name: "a later kreact.after replaces the pending one",
			after: map[event.Type]time.Duration{
				event.Add:    10 * time.Minute,
				event.Update: time.Minute,
			},
			steps: func(observe func(Change), step func(time.Duration)) {
				observe(add(a1))
				observe(update(a1, a2))
				step(time.Minute)
				step(time.Hour)
			},
			want: []string{"onAdd(a=1)", "onUpdate(a=1->a=2)[data.v]", "onTimer(a=2)", "step 1m0s", "step 1h0m0s"},
		},
		{
			name:  "a later, longer kreact.after postpones it",
			after: map[event.Type]time.Duration{event.Add: time.Minute, event.Update: time.Hour},
			steps: func(observe func(Change), step func(time.Duration)) {
				observe(add(a1))
				observe(update(a1, a2))
				step(59 * time.Minute)
				step(time.Minute)
			},
			want: []string{"onAdd(a=1)", "onUpdate(a=1->a=2)[data.v]", "step 59m0s", "onTimer(a=2)", "step 1m0s"},
		},
		{
			name:  "a delete drops the timer",
			after: map[event.Type]time.Duration{event.Add: time.Minute},
			steps: func(observe func(Change), step func(time.Duration)) {
				observe(add(a1))
				observe(del(a1))
				step(time.Hour)
				observe(add(a2))
				step(30 * time.Second)
			},
			want: []string{"onAdd(a=1)", "onDelete(a=1)", "step 1h0m0s", "onAdd(a=2)", "step 30s"},
		},
		{
			name:  "onTimer can re-arm itself",
			after: map[event.Type]time.Duration{event.Add: time.Minute, event.Timer: time.Minute},
			steps: func(observe func(Change), step func(time.Duration)) {
				observe(add(a1))
				step(3 * time.Minute)
			},
			want: []string{"onAdd(a=1)", "onTimer(a=1)", "onTimer(a=1)", "onTimer(a=1)", "step 3m0s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, clk, rec := newClocked(t, testRule(), Options{})
			c := &timerCaller{recorder: rec, after: tt.after}
			observe := func(ch Change) {
				d.Observe(0, ch)
				d.Drain(t.Context(), c)
			}
			tt.steps(observe, func(dt time.Duration) {
				d.Drain(t.Context(), c)
				advance(t, d, clk, c, dt)
				rec.mu.Lock()
				rec.calls = append(rec.calls, "step "+dt.String())
				rec.mu.Unlock()
			})
			if got := rec.recorded(); !slices.Equal(got, tt.want) {
				t.Errorf("calls =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// A timer is part of its call's transaction: a call that fails arms none,
// and a failed onTimer is retried like any call.
func TestTimersAreTransactional(t *testing.T) {
	d, clk, rec := newClocked(t, testRule(), Options{})
	c := &timerCaller{recorder: rec, after: map[event.Type]time.Duration{event.Add: time.Minute}}
	rec.fail = func(ev event.Event) error { return errors.New("boom") }
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), c)
	if n := d.Timers(); n != 0 {
		t.Fatalf("a failed call armed %d timers", n)
	}

	failures := 1
	rec.fail = func(ev event.Event) error {
		if ev.Type == event.Timer && failures > 0 {
			failures--
			return errors.New("timer boom")
		}
		return nil
	}
	rec.calls = nil
	d.Observe(0, add(cm("b", "1")))
	d.Drain(t.Context(), c)
	advance(t, d, clk, c, time.Minute)
	want := []string{"onAdd(b=1)", "onTimer(b=1)", "onTimer(b=1)"}
	if got := rec.recorded(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if n := d.Timers(); n != 0 {
		t.Errorf("%d timers left after they fired", n)
	}
}

// A timer is not armed for an object the cache no longer holds: the call
// ran on a state that was deleted meanwhile.
func TestTimerOfAGoneObjectIsNotArmed(t *testing.T) {
	store := mapCache{}
	d, _, rec := newClocked(t, testRule(), Options{Cache: store})
	c := &timerCaller{recorder: rec, after: map[event.Type]time.Duration{event.Add: time.Minute}}
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), c)
	if n := d.Timers(); n != 0 {
		t.Errorf("%d timers armed for an object not in the cache", n)
	}
	store["b"] = cm("b", "1")
	d.Observe(0, add(cm("b", "1")))
	d.Drain(t.Context(), c)
	if n := d.Timers(); n != 1 {
		t.Errorf("%d timers armed, want 1", n)
	}
}

// spec.every ticks on the Core's clock; ticks missed while the clock
// jumped are merged into one.
func TestEveryTicksOnTheClock(t *testing.T) {
	d, clk, rec := newClocked(t, testRule(func(r *rules.Rule) { r.Every = 10 * time.Second }), Options{})
	advance(t, d, clk, rec, 25*time.Second)
	if got := rec.recorded(); !slices.Equal(got, []string{"onTick", "onTick"}) {
		t.Errorf("after 25s: calls = %q, want two ticks", got)
	}
	clk.Step(time.Hour)
	d.Fire()
	d.Drain(t.Context(), rec)
	if got := rec.recorded(); len(got) != 3 {
		t.Errorf("after a jump of 1h: %d calls, want 3", len(got))
	}
	if next, _ := d.NextDue(); !next.Equal(t0.Add(time.Hour + 30*time.Second)) {
		t.Errorf("next tick at %v, want %v", next, t0.Add(time.Hour+30*time.Second))
	}
}

// spec.schedule ticks on its calendar, in its time zone.
func TestScheduleTicksOnTheCalendar(t *testing.T) {
	d, clk, rec := newClocked(t, testRule(func(r *rules.Rule) { r.Schedule, r.TimeZone = "0 3 * * *", "Europe/Paris" }), Options{})
	next, ok := d.NextDue()
	if want := time.Date(2026, 1, 2, 2, 0, 0, 0, time.UTC); !ok || !next.Equal(want) {
		t.Fatalf("first tick at %v, want %v", next, want)
	}
	advance(t, d, clk, rec, 3*24*time.Hour)
	if got := rec.recorded(); !slices.Equal(got, []string{"onTick", "onTick", "onTick"}) {
		t.Errorf("after three days: calls = %q, want three ticks", got)
	}
}

// A scheduled tick whose call fails, is retried and given up does not end
// the schedule: the retry's backoff shares the workqueue entry of the
// tick key with the next scheduled tick, and must not replace it. Run's
// workers and the workqueue's delays both follow the fake clock here, as
// kreact run's do the real one.
func TestTicksContinueAfterAFailedTick(t *testing.T) {
	for _, failures := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d failures", failures), func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			rec := &recorder{}
			var calls atomic.Int32
			rec.fail = func(event.Event) error {
				if calls.Add(1) <= int32(failures) {
					return errors.New("boom")
				}
				return nil
			}
			r := testRule(func(r *rules.Rule) { r.Every, r.Retries = 2*time.Second, 1 })
			d := New(r, allHandlers{}, rec, Options{Logger: quiet(), BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Clock: clk})
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				d.Run(ctx, []Caller{rec})
			}()
			defer func() { cancel(); <-done }()
			// Up to 30 seconds of the fake clock, in steps that let the
			// workqueue's goroutines catch up; ticks are due every 2s.
			good := func() int { return int(calls.Load()) - failures }
			for i := 0; i < 300 && good() < 5; i++ {
				clk.Step(100 * time.Millisecond)
				time.Sleep(time.Millisecond)
			}
			if good() < 5 {
				t.Errorf("%d calls in %v of every: 2s, %d of them failed; want at least 5 good ticks", calls.Load(), clk.Since(t0), failures)
			}
		})
	}
}

// owner is a ScheduleOwner the test sets.
type owner struct{ here atomic.Bool }

func (o *owner) OwnsSchedules() bool { return o.here.Load() }

// With Options.Schedules (kreact run --shards), a rule ticks once per
// cluster: only where the owner says so, unless its spec.tickScope is
// replica. A replica that gains the schedules ticks from its next tick.
func TestTicksOnceForTheCluster(t *testing.T) {
	for _, tt := range []struct {
		scope rules.TickScope
		want  []int // ticks after 25s elsewhere, then 20s here
	}{
		{rules.TickCluster, []int{0, 2}},
		{"", []int{0, 2}},
		{rules.TickReplica, []int{2, 4}},
	} {
		t.Run(string(tt.scope), func(t *testing.T) {
			o := &owner{}
			d, clk, rec := newClocked(t, testRule(func(r *rules.Rule) { r.Every, r.TickScope = 10*time.Second, tt.scope }), Options{Schedules: o})
			advance(t, d, clk, rec, 25*time.Second)
			if got := len(rec.recorded()); got != tt.want[0] {
				t.Errorf("elsewhere: %d ticks, want %d", got, tt.want[0])
			}
			o.here.Store(true)
			advance(t, d, clk, rec, 20*time.Second)
			if got := len(rec.recorded()); got != tt.want[1] {
				t.Errorf("here: %d ticks in all, want %d", got, tt.want[1])
			}
		})
	}
}
