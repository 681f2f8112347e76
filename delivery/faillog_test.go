package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// A rule that fails the same way on every object logs that failure in
// full once per failureLogEvery, then a line that counts the occurrences
// since, whatever the object its message names; a failure of its own
// (another position) is logged at once.
func TestRepeatedFailuresAreSummarised(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	var logs testcluster.LogBuffer
	// The message names the object, as scripts' messages often do: the
	// position makes the failure the same.
	rec := &recorder{fail: func(ev event.Event) error {
		name := ev.Object.GetName()
		if name == "odd" {
			return &event.ScriptError{Position: diag.Position{File: "r.yaml", Line: 12, Col: 5}, Message: "Error: other"}
		}
		return &event.ScriptError{Position: diag.Position{File: "r.yaml", Line: 9, Col: 3}, Message: "Error: boom on " + name}
	}}
	d := New(testRule(func(r *rules.Rule) { r.Retries = 3 }), allHandlers{}, rec,
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BaseDelay: -1, Clock: clk})
	t.Cleanup(d.ShutDown)
	observe := func(names ...string) {
		for _, n := range names {
			d.Observe(0, add(cm(n, "1")))
		}
		d.Drain(t.Context(), rec)
	}
	count := func(substrs ...string) int {
		n := 0
		for line := range strings.SplitSeq(logs.String(), "\n") {
			all := line != ""
			for _, s := range substrs {
				all = all && strings.Contains(line, s)
			}
			if all {
				n++
			}
		}
		return n
	}
	const retried, givenUp = `msg="script failed; the call will be retried on the latest state"`, `msg="handler call given up"`

	// 10 objects, 4 calls each: 30 retries and 10 given up, all at r.yaml:9:3.
	observe("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	if n := count(retried, "position=r.yaml:9:3"); n != 1 {
		t.Errorf("%d retry lines for the same failure, want 1:\n%s", n, logs.String())
	}
	if n := count(givenUp, "position=r.yaml:9:3"); n != 1 {
		t.Errorf("%d given-up lines for the same failure, want 1:\n%s", n, logs.String())
	}
	observe("odd")
	if n := count(retried, "position=r.yaml:12:5"); n != 1 {
		t.Errorf("%d retry lines for another failure, want 1:\n%s", n, logs.String())
	}

	// Once the period has passed, a line counts what was not logged.
	clk.Step(failureLogEvery)
	d.failures.flush()
	if n := count(retried, "position=r.yaml:9:3", "repeated=29 over=10s"); n != 1 {
		t.Errorf("no line counts the 29 retries not logged:\n%s", logs.String())
	}
	if n := count(givenUp, "position=r.yaml:9:3", "repeated=9 over=10s"); n != 1 {
		t.Errorf("no line counts the 9 given-up calls not logged:\n%s", logs.String())
	}
	// A failure that recurs after a quiet period is logged in full again.
	clk.Step(failureLogEvery)
	d.failures.flush()
	observe("k")
	if n := count(retried, "position=r.yaml:9:3"); n != 3 {
		t.Errorf("%d retry lines, want the first, the count, and the first after a quiet period:\n%s", n, logs.String())
	}
}

// Workers stuck in built-in code delay every change; that is one line per
// period, not one per change.
func TestStuckWorkersAreLoggedOncePerPeriod(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	var logs testcluster.LogBuffer
	rec := &recorder{fail: func(event.Event) error { return event.ErrStuck }}
	d := New(testRule(), allHandlers{}, rec, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BaseDelay: -1, Clock: clk})
	t.Cleanup(d.ShutDown)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		d.Observe(0, add(cm(n, "1")))
	}
	d.Drain(t.Context(), rec)
	if n := strings.Count(logs.String(), "script workers stuck in built-in code"); n != 1 {
		t.Errorf("%d stuck lines for 5 changes, want 1:\n%s", n, logs.String())
	}
}

// A Core that stops within the period logs what it counted since the
// failure's first line: the count is not lost with the process.
func TestRepeatedFailuresAreFlushedOnStop(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	var logs testcluster.LogBuffer
	rec := &recorder{fail: func(ev event.Event) error {
		return &event.ScriptError{Position: diag.Position{File: "r.yaml", Line: 9, Col: 3}, Message: "Error: boom on " + ev.Object.GetName()}
	}}
	d := New(testRule(func(r *rules.Rule) { r.Retries = 0 }), allHandlers{}, rec,
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BaseDelay: -1, Clock: clk})
	names := []string{"a", "b", "c", "d", "e"}
	for _, n := range names {
		d.Observe(0, add(cm(n, "1")))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{rec})
	}()
	testcluster.Eventually(t, "a call per object", func() bool { return len(rec.recorded()) == len(names) })
	clk.Step(3 * time.Second)
	cancel()
	<-done
	var given []string
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, `msg="handler call given up"`) {
			given = append(given, line)
		}
	}
	if len(given) != 2 || strings.Contains(given[0], "repeated=") || !strings.Contains(given[1], "repeated=4 over=3s") {
		t.Errorf("given-up lines %q, want the first in full and then repeated=4 over=3s:\n%s", given, logs.String())
	}
}

// Failures at the same script position are summarised together only when
// their errors are of the same kind: a memory stop is not hidden behind
// the timeouts of the same call site, nor a throw behind either.
func TestFailuresOfAnotherKindAreLoggedApart(t *testing.T) {
	var logs bytes.Buffer
	f := newFailureLog(slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return t0 })
	at := diag.Position{File: "r.yaml", Line: 9, Col: 3}
	timeout := &event.ScriptError{Position: at, Message: "timeout after 1s", Timeout: true}
	memory := &event.ScriptError{Position: at, Message: "memory limit of 64 MiB exceeded", Memory: true}
	thrown := &event.ScriptError{Position: at, Message: "Error: boom"}
	for _, err := range []error{timeout, timeout, memory, timeout, thrown, memory} {
		f.failed(slog.LevelWarn, "script failed", err, []any{"error", err.(*event.ScriptError).Message})
	}
	for _, tt := range []struct {
		name  string
		error string
	}{
		{"timeout", "timeout after 1s"},
		{"memory limit", "memory limit of 64 MiB exceeded"},
		{"thrown", "Error: boom"},
	} {
		if n := strings.Count(logs.String(), `error="`+tt.error+`"`); n != 1 {
			t.Errorf("%s: %d lines, want 1 (its first occurrence):\n%s", tt.name, n, logs.String())
		}
	}
	logs.Reset()
	f.flushAll()
	for _, want := range []string{`error="timeout after 1s" repeated=2`, `error="memory limit of 64 MiB exceeded" repeated=1`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the flush lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "boom") {
		t.Errorf("the flush logs the throw, which did not repeat:\n%s", logs.String())
	}
}

func TestFailureKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"timeout", &event.ScriptError{Timeout: true}, "timeout"},
		{"memory over a timeout", &event.ScriptError{Timeout: true, Memory: true}, "memory limit"},
		{"cpu limit", &event.ScriptError{CPULimit: true}, "cpu limit"},
		{"stuck", &event.ScriptError{Err: event.ErrStuck}, "stuck"},
		{"thrown", &event.ScriptError{Message: "Error: boom"}, "thrown"},
		{"wrapped", fmt.Errorf("call: %w", &event.ScriptError{Timeout: true}), "timeout"},
		{"not a script's", errors.New("patch refused"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureKind(tt.err); got != tt.want {
				t.Errorf("failureKind = %q, want %q", got, tt.want)
			}
		})
	}
}
