package ruletest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// Result is the outcome of one case.
type Result struct {
	// Case is the case that ran.
	Case *Case
	// Actions are the actions the rules asked for, in order.
	Actions []actions.Action
	// Errors are the script errors, as kreact run would log them
	// ("file:line:col: message (rule r, onAdd)"), in order.
	Errors []string
	// Logs are the scripts' log records, one line each.
	Logs []string
	// Admission are the answers of the admission handlers to the case's
	// admit events, in order (AnswerFields).
	Admission []Fields
	// Problem, if not nil, is why the events could not all be applied
	// (an update of an object that is not in the cache...). The case
	// fails; the expectation is not checked.
	Problem *Error
	// ActionsDiff is a line diff (-expected +actual) of the actions when
	// they differ from the expectation, else "".
	ActionsDiff string
	// Failures say what else differs from the expectation: errors and
	// logs.
	Failures []string
	// Duration is how long the case took.
	Duration time.Duration
	// Explain is, with File.Explain, what each rule knows of each object
	// the case's events name, at the end of the case, in the order they
	// are first named: the same answer as kreact explain's.
	Explain []explain.Object
}

// Passed reports whether the case met its expectation.
func (r *Result) Passed() bool {
	return r.Problem == nil && r.ActionsDiff == "" && len(r.Failures) == 0
}

// Differs says in a few words each what of the case did not meet its
// expectation: why its events could not all be applied, "the actions",
// then the first line of each of Failures. It is empty when the case
// passed.
func (r *Result) Differs() []string {
	var out []string
	if r.Problem != nil {
		first, _, _ := strings.Cut(r.Problem.Error(), "\n")
		out = append(out, first)
	}
	if r.ActionsDiff != "" {
		out = append(out, "the actions")
	}
	for _, f := range r.Failures {
		first, _, _ := strings.Cut(f, "\n")
		out = append(out, strings.TrimSuffix(first, ":"))
	}
	return out
}

// Run runs every case of the file, in order, and returns their results.
// Cases are independent: each starts from the fixtures, with new script
// runtimes (no global state carries over). Run stops early, with the
// results so far, when ctx ends.
func (f *File) Run(ctx context.Context) []*Result {
	var out []*Result
	for _, c := range f.Cases {
		if ctx.Err() != nil {
			break
		}
		out = append(out, f.RunCase(ctx, c))
	}
	return out
}

// ruleRun is a rule under test in one case: its plan, the delivery core
// that kreact run uses, and one runtime.
type ruleRun struct {
	rule     *rules.Resolved
	plan     []delivery.Informer
	delivery *delivery.Core
	proj     *projector
	caller   caller
}

// givenUp records, as kreact run logs them, the errors of handler calls
// that failed and used up their retries.
type givenUp struct {
	mu   sync.Mutex
	errs []string
}

func (g *givenUp) Event(string, string, event.Type)                     {}
func (g *givenUp) HandlerCall(string, event.Type, time.Duration, error) {}
func (g *givenUp) ChangesDropped(string, int)                           {}
func (g *givenUp) HandlerGivenUp(_ string, _ event.Type, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, err.Error())
}

// RunCase runs one case of the file and checks its expectation.
func (f *File) RunCase(ctx context.Context, c *Case) *Result {
	start := time.Now()
	res := &Result{Case: c}
	st := newStore()
	for _, o := range f.Fixtures {
		st.put(o)
	}
	for _, o := range c.Fixtures {
		st.put(o)
	}
	now := f.Now
	if !c.Now.IsZero() {
		now = c.Now
	}
	rec := newRecorder()
	failed := &givenUp{}
	clk := testingclock.NewFakeClock(now)
	var runs []*ruleRun
	var trace delivery.TraceSize
	if f.Explain {
		trace = delivery.DefaultTraceSize
	}
	var reviewers []reviewer
	for i, r := range f.rules {
		plan := delivery.PlanWith(r, delivery.PlanOptions{Handlers: f.programs[i]})
		proj := newProjector(r, plan)
		h := &host{rule: r, plan: plan, mapper: f.mapper, store: st, clock: clk, rec: rec}
		rt, err := scripting.NewRuntime(f.programs[i], h, scripting.RuntimeOptions{
			Rule:        r.Rule.Name,
			Timeout:     r.Rule.Timeout,
			MaxActions:  r.Rule.MaxActions,
			MemoryLimit: r.Rule.MemoryLimit,
			DryRun:      r.Rule.DryRun,
			Replica:     func() scripting.Replica { return c.Replica },
		})
		if err != nil {
			// kreact run logs this and does not start the rule.
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		defer rt.Close()
		// The clock of a test moves only with advance events, so retries
		// are made at once; what is retried, and on which state, is what
		// kreact run does.
		d := delivery.New(r.Rule, f.programs[i], rec, delivery.Options{
			Logger:    slog.New(slog.DiscardHandler),
			Observer:  failed,
			BaseDelay: -1,
			Cache:     storeCache{store: st, plan: plan, proj: proj},
			Clock:     clk,
			Trace:     trace,
		})
		defer d.ShutDown()
		runs = append(runs, &ruleRun{rule: r, plan: plan, delivery: d, proj: proj, caller: caller{rt: rt, p: proj}})
		if hs := admission.HandlersOf(f.programs[i]); hs.Any() {
			// What kreact run serves to the API server, with the
			// same code, on the test's cache.
			ar := admission.Rule{Resolved: r, Handlers: hs}
			rv := admission.NewReviewer(ar, f.programs[i], admissionHost{h})
			defer rv.Close()
			reviewers = append(reviewers, reviewer{rule: ar, r: rv})
		}
	}

	for _, ev := range c.Events {
		if ctx.Err() != nil {
			res.Problem = problem(ev.Pos, "%s: not run: %v", ev.Type, ctx.Err())
			break
		}
		if ev.Type == Advance {
			if res.Problem = advance(ctx, clk, runs, ev); res.Problem != nil {
				break
			}
			continue
		}
		if ev.Type == Admit {
			if res.Problem = admit(ctx, st, reviewers, ev, res); res.Problem != nil {
				break
			}
			continue
		}
		if res.Problem = apply(st, runs, ev); res.Problem != nil {
			break
		}
		if !ev.Queued {
			for _, run := range runs {
				run.delivery.Drain(ctx, run.caller)
			}
		}
	}
	for _, run := range runs {
		run.delivery.Drain(ctx, run.caller)
	}
	res.Errors = append(res.Errors, failed.errs...)
	res.Actions = rec.recorded()
	res.Logs = rec.logs()
	if res.Problem == nil {
		f.check(c, res)
	}
	var outside []string
	for _, run := range runs {
		outside = append(outside, run.proj.outside()...)
	}
	if len(outside) > 0 {
		res.Failures = append(res.Failures, "read a path that spec.watch[].fields does not keep (kreact run gives undefined):\n"+bullets(outside))
	}
	if f.Explain {
		res.Explain = explainCase(c, st, runs)
	}
	res.Duration = time.Since(start)
	return res
}

// explainCase is what each rule knows of each object that the events of
// c name, in the order they are first named.
func explainCase(c *Case, st *store, runs []*ruleRun) []explain.Object {
	var out []explain.Object
	seen := map[objectKey]bool{}
	for _, ev := range c.Events {
		if ev.Object.Object == nil {
			continue
		}
		k := keyOf(ev.Object)
		if seen[k] {
			continue
		}
		seen[k] = true
		obj := st.get(k)
		o := explain.Object{Resource: k.gr.String(), Namespace: k.namespace, Name: k.name, Exists: obj != nil}
		for _, run := range runs {
			o.Rules = append(o.Rules, explain.ForRule(run.rule, run.delivery, k.gr, k.namespace, k.name, obj))
		}
		out = append(out, o)
	}
	return out
}

// maxFirings bounds the steps of one advance event: a timer that re-arms
// itself with no delay would otherwise keep the clock from moving.
const maxFirings = 10000

// advance moves the clock by ev.Duration. It stops at every deadline on
// the way (timers, scheduled ticks), in order, and lets the rules make the
// calls due then, so that each sees the clock at its own deadline, as under
// kreact run. Changes still queued are handled first: time passing lets
// kreact run catch up too.
func advance(ctx context.Context, clk *testingclock.FakeClock, runs []*ruleRun, ev Event) *Error {
	catchUp := func() {
		for _, run := range runs {
			run.delivery.Fire()
			run.delivery.Drain(ctx, run.caller)
		}
	}
	catchUp()
	end := clk.Now().Add(ev.Duration)
	for range maxFirings {
		var next time.Time
		for _, run := range runs {
			if at, ok := run.delivery.NextDue(); ok && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
		if next.IsZero() || next.After(end) {
			clk.SetTime(end)
			catchUp()
			return nil
		}
		if next.After(clk.Now()) {
			clk.SetTime(next)
		}
		catchUp()
		if ctx.Err() != nil {
			return problem(ev.Pos, "advance: not run: %v", ctx.Err())
		}
	}
	return problem(ev.Pos, "advance: timers and ticks fell due more than %d times before %s; does a timer re-arm itself that often, or should the test advance less?",
		maxFirings, end.Format(time.RFC3339))
}

// apply makes one event happen: it changes the cache and tells each
// rule's informers, as a watch would report the change to them.
func apply(st *store, runs []*ruleRun, ev Event) *Error {
	if ev.Type == event.Tick {
		for _, run := range runs {
			if run.rule.Rule.Name == ev.Rule {
				run.delivery.Tick()
			}
		}
		// Not found: the rule's top level failed; that error is recorded.
		return nil
	}
	o := ev.Object
	k := keyOf(o)
	name := o.Resource.Kind + " " + objectName(o.Object)
	switch ev.Type {
	case event.Add:
		if st.get(k) != nil {
			return problem(ev.Pos, "add: %s is already in the cache; use update, or remove it from the fixtures", name)
		}
		st.put(o)
		return observeAll(runs, ev, nil, st.get(k))
	case event.Update:
		old := st.get(k)
		if old == nil {
			return problem(ev.Pos, "update: %s is not in the cache; add it first, or list it in the fixtures", name)
		}
		st.put(o)
		return observeAll(runs, ev, old, st.get(k))
	case event.Delete:
		old := st.get(k)
		if old == nil {
			return problem(ev.Pos, "delete: %s is not in the cache", name)
		}
		st.remove(k)
		return observeAll(runs, ev, old, nil)
	}
	return problem(ev.Pos, "unknown event type %q", ev.Type)
}

// observeAll reports a change from old to obj (nil for none) to every
// informer of the plans that watches the event's resource, as that
// informer would see it: an object that starts to match its namespace and
// selectors is an add, one that stops matching a delete of the last
// version it matched.
func observeAll(runs []*ruleRun, ev Event, old, obj *unstructured.Unstructured) *Error {
	gr := ev.Object.Resource.GVR.GroupResource()
	for _, run := range runs {
		for i, inf := range run.plan {
			if !inf.Handled || inf.Key.GVR.GroupResource() != gr {
				continue
			}
			before, err := sees(inf.Key, old)
			if err == nil {
				var after bool
				after, err = sees(inf.Key, obj)
				if err == nil {
					observe(run.delivery, i, inf, ev, before, after, run.proj.project(i, old), run.proj.project(i, obj))
				}
			}
			if err != nil {
				return problem(ev.Pos, "rule %q: spec.watch %s: %v", run.rule.Rule.Name, inf.Resource.GVR.GroupResource(), err)
			}
		}
	}
	return nil
}

func observe(d *delivery.Core, source int, inf delivery.Informer, ev Event, before, after bool, old, obj *unstructured.Unstructured) {
	switch {
	case before && after:
		d.Observe(source, delivery.Change{Type: event.Update, Old: old, Object: obj, Resource: inf.Resource})
	case after:
		d.Observe(source, delivery.Change{Type: event.Add, Object: obj, Initial: ev.Initial, Resource: inf.Resource})
	case before:
		d.Observe(source, delivery.Change{Type: event.Delete, Object: old, Resource: inf.Resource})
	}
}

func objectName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// check compares what happened with the case's expectation.
func (f *File) check(c *Case, res *Result) {
	actual := make([]Fields, len(res.Actions))
	for i, a := range res.Actions {
		actual[i] = ActionFields(a, true)
	}
	res.ActionsDiff = compareActions(c.Expect.Actions, actual, c.Expect.IgnoreOtherActions)
	if c.Expect.Admission != nil {
		if diff := compareIn(fieldSet{answerFields, answerCompared}, c.Expect.Admission, res.Admission, false); diff != "" {
			res.Failures = append(res.Failures, "admission answers differ (-expected +actual):\n"+indent(diff, "  "))
		}
	}

	exp := c.Expect.Errors
	switch {
	case len(exp) == 0 && len(res.Errors) > 0:
		res.Failures = append(res.Failures, "unexpected script errors:\n"+bullets(res.Errors))
	case len(exp) != len(res.Errors):
		res.Failures = append(res.Failures, fmt.Sprintf("want %d script errors containing:\n%sgot %d:\n%s",
			len(exp), bullets(quoteAll(exp)), len(res.Errors), bullets(res.Errors)))
	default:
		for i, want := range exp {
			if !strings.Contains(res.Errors[i], want) {
				res.Failures = append(res.Failures, fmt.Sprintf("script error %d does not contain %q:\n%s", i+1, want, bullets(res.Errors[i:i+1])))
			}
		}
	}

	next := 0
	for _, want := range c.Expect.Logs {
		i := slices.IndexFunc(res.Logs[next:], func(l string) bool { return strings.Contains(l, want) })
		if i < 0 {
			what := "the logs"
			if next > 0 {
				what = "the logs after the previous match"
			}
			res.Failures = append(res.Failures, fmt.Sprintf("no log record containing %q in %s", want, what))
			break
		}
		next += i + 1
	}
	for _, want := range c.Expect.LogsContain {
		if !slices.ContainsFunc(res.Logs, func(l string) bool { return strings.Contains(l, want) }) {
			res.Failures = append(res.Failures, fmt.Sprintf("no log record containing %q", want))
		}
	}
}

func bullets(lines []string) string {
	if len(lines) == 0 {
		return "  (none)\n"
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + strings.ReplaceAll(l, "\n", "\n    ") + "\n")
	}
	return b.String()
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// testReplica is kreact.replica() in a test unless the case says
// otherwise: a fixed identity, so that what a case expects does not
// depend on the machine it runs on.
var testReplica = scripting.Replica{Name: "kreact-test", Leader: true}
