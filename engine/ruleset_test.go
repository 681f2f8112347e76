package engine

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// fakeEngine runs whatever it is given, unless err is set: then nothing.
type fakeEngine struct {
	mu    sync.Mutex
	err   error
	names []string
	loads int
}

func (f *fakeEngine) Load(_ context.Context, rs []*rules.Rule, _ ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	if f.err != nil {
		return f.err
	}
	f.names = nil
	for _, r := range rs {
		f.names = append(f.names, r.Name)
	}
	return nil
}

func (f *fakeEngine) Status() []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Status
	for _, n := range f.names {
		out = append(out, Status{Rule: n, Running: true, Synced: true})
	}
	return out
}

// No rule running is a NoRulesError carrying every problem, each logged.
func TestRulesWithNoRuleRunning(t *testing.T) {
	var problems diag.ErrorList
	problems.Add(diag.Position{File: "r.yaml", Line: 3, Col: 1, Rule: "r"}, `rule "r": script: Unexpected token`)
	var logs testcluster.LogBuffer
	loaded := false
	r := &RuleSet{Engine: &fakeEngine{err: problems}, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Loaded: func(int) { loaded = true }}
	err := r.Start(t.Context())
	var none *NoRulesError
	if !errors.As(err, &none) || err.Error() != problems.Error() {
		t.Fatalf("Start = %v, want a NoRulesError with the problems", err)
	}
	if loaded || !strings.Contains(logs.String(), `msg="rules with errors are not running" rule=r`) {
		t.Errorf("loaded = %v, logs:\n%s", loaded, logs.String())
	}
}

// Rules another process runs count: with a problem in this process's rules
// and none running here, the set still runs, and Loaded counts them.
func TestRulesRunningElsewhereCount(t *testing.T) {
	var problems diag.ErrorList
	problems.Add(diag.Position{File: "r.yaml", Line: 3, Col: 1, Rule: "r"}, `rule "r": script: Unexpected token`)
	var logs testcluster.LogBuffer
	ctx, cancel := context.WithCancel(t.Context())
	counts := make(chan int, 1)
	r := &RuleSet{
		Engine: &fakeEngine{err: problems}, Informers: func() []dynamicinformer.WatchStatus { return nil }, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Loaded: func(n int) { counts <- n }, Elsewhere: &otherProcess{running: 2},
	}
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	if n := <-counts; n != 2 {
		t.Errorf("Loaded told %d rules, want the 2 running elsewhere", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v, want nil: two rules run elsewhere", err)
	}
	if !strings.Contains(logs.String(), `msg="rules loaded" rules=0 isolatedRules=2`) {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// otherProcess is an Elsewhere that runs running rules, or says why none
// can run.
type otherProcess struct {
	mu      sync.Mutex
	running int
	invalid error
	changed chan struct{}
}

func (o *otherProcess) Running() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.running
}

func (o *otherProcess) Heard(context.Context) error { return o.invalid }

func (o *otherProcess) Changed() <-chan struct{} { return o.changed }

// When no rule runs here and the other process says none of its rules can
// run either, the set does not run: a NoRulesError with both sides'
// problems, as if the rules had all been this process's.
func TestRulesWithNoneRunningElsewhere(t *testing.T) {
	other := &otherProcess{invalid: errors.New(`isolated rules: none can run: r.yaml:8:17: no such resource; did you mean "deployments"?`)}
	loaded := false
	r := &RuleSet{Engine: &fakeEngine{}, Logger: slog.New(slog.DiscardHandler), Loaded: func(int) { loaded = true }, Elsewhere: other}
	err := r.Start(t.Context())
	var none *NoRulesError
	if !errors.As(err, &none) || !strings.Contains(err.Error(), `did you mean "deployments"?`) {
		t.Fatalf("Start = %v, want a NoRulesError with the other process's problems", err)
	}
	if loaded {
		t.Error("Loaded was told of rules that do not run")
	}
}

// When the other process's count changes (Changed), Loaded is told, but
// only once Start has loaded the rules.
func TestRulesRecountsWhatRunsElsewhere(t *testing.T) {
	other := &otherProcess{running: 1, changed: make(chan struct{}, 1)}
	counts := make(chan int, 10)
	r := &RuleSet{
		Engine: &fakeEngine{}, Informers: func() []dynamicinformer.WatchStatus { return nil }, Logger: slog.New(slog.DiscardHandler),
		Loaded: func(n int) { counts <- n }, Elsewhere: other,
	}
	other.changed <- struct{}{}
	if len(counts) != 0 {
		t.Fatalf("a change before Start told Loaded %d", <-counts)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	if n := <-counts; n != 1 {
		t.Errorf("Loaded told %d rules at the start, want 1", n)
	}
	other.mu.Lock()
	other.running = 0 // its process exited
	other.mu.Unlock()
	other.changed <- struct{}{}
	if n := <-counts; n != 0 {
		t.Errorf("Loaded told %d rules after the other process exited, want 0", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v", err)
	}
}

// The rules load, the set reloads on an edit, and Start returns when its
// context ends.
func TestRulesLoadsAndReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	write(t, file, rule("a", "function onAdd() {}"))
	since := Fingerprint([]string{dir})
	rs, failed, err := rules.LoadEach(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var logs testcluster.LogBuffer
	counts := make(chan int, 10)
	reloaded := make(chan error, 10)
	r := &RuleSet{
		Engine: &fakeEngine{}, Informers: func() []dynamicinformer.WatchStatus { return nil }, Rules: rs, Failed: failed, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Options: ReloadOptions{Paths: []string{dir}, Interval: 10 * time.Millisecond, Since: since, Reloaded: func(err error) { reloaded <- err }},
		Loaded:  func(n int) { counts <- n },
		Attrs:   []any{"dryRun", true},
	}
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	if n := <-counts; n != 1 {
		t.Errorf("loaded %d rules, want 1", n)
	}
	write(t, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"))
	if err := <-reloaded; err != nil {
		t.Errorf("reload: %v", err)
	}
	if n := <-counts; n != 2 {
		t.Errorf("reloaded %d rules, want 2", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v", err)
	}
	for _, want := range []string{
		`msg="rules loaded" rules=1 files=` + dir + ` dryRun=true`,
		`msg="caches synced; kreact is running"`,
		`msg="rules reloaded" rules=2`,
		`msg="shutting down: finishing queued changes and actions"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
}

// A reload logs the errors of the files that changed since the last load,
// not again those of files that did not, which it counts on a line of
// their own.
func TestReloadLogsOnlyTheErrorsOfChangedFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	write(t, filepath.Join(dir, "good.yaml"), rule("good", "function onAdd() {}"))
	write(t, bad, "kind: [")
	since := Fingerprint([]string{dir})
	rs, failed, _ := rules.LoadEach(dir)
	ctx, cancel := context.WithCancel(t.Context())
	var logs testcluster.LogBuffer
	counts := make(chan int, 10)
	reloaded := make(chan error, 10)
	r := &RuleSet{
		Engine: &fakeEngine{}, Informers: func() []dynamicinformer.WatchStatus { return nil }, Rules: rs, Failed: failed, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Options: ReloadOptions{Paths: []string{dir}, Interval: 10 * time.Millisecond, Since: since, Reloaded: func(err error) { reloaded <- err }},
		Loaded:  func(n int) { counts <- n },
	}
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	<-counts
	badLines := func() int {
		n := 0
		for line := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(line, `msg="reload: rules with errors keep their previous version"`) && strings.Contains(line, bad) {
				n++
			}
		}
		return n
	}

	write(t, filepath.Join(dir, "new.yaml"), rule("new", "function onAdd() {}"))
	if err := <-reloaded; err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("reload error %v, want bad.yaml's", err)
	}
	<-counts
	if n := badLines(); n != 0 {
		t.Errorf("a new file re-logged the error of bad.yaml, which did not change:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `msg="reload: errors of unchanged files, logged before, not repeated" errors=1`) {
		t.Errorf("logs do not count the errors of unchanged files:\n%s", logs.String())
	}

	write(t, bad, "kind: [\n# still broken\n")
	<-reloaded
	<-counts
	if n := badLines(); n == 0 {
		t.Errorf("the error of bad.yaml, which changed, is not logged:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start = %v", err)
	}
}
