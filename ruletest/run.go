package ruletest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
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
}

// Passed reports whether the case met its expectation.
func (r *Result) Passed() bool {
	return r.Problem == nil && r.ActionsDiff == "" && len(r.Failures) == 0
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

// ruleRun is a rule under test in one case.
type ruleRun struct {
	rule    *rules.Resolved
	program *scripting.Program
	rt      *scripting.Runtime
	ignore  []string
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
	var runs []*ruleRun
	for i, r := range f.rules {
		rt, err := scripting.NewRuntime(f.programs[i], newHost(r, f.mapper, st, now, rec), scripting.RuntimeOptions{
			Rule:    r.Rule.Name,
			Timeout: r.Rule.Timeout,
			DryRun:  r.Rule.DryRun,
		})
		if err != nil {
			// kreact run logs this and does not start the rule.
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		defer rt.Close()
		run := &ruleRun{rule: r, program: f.programs[i], rt: rt}
		for _, p := range r.Rule.IgnoredPaths() {
			run.ignore = append(run.ignore, p.String())
		}
		runs = append(runs, run)
	}

	for _, ev := range c.Events {
		if ctx.Err() != nil {
			res.Problem = problem(ev.Pos, "%s: not run: %v", ev.Type, ctx.Err())
			break
		}
		if res.Problem = apply(st, runs, ev, &res.Errors); res.Problem != nil {
			break
		}
	}
	res.Actions = rec.recorded()
	res.Logs = rec.logs()
	if res.Problem == nil {
		f.check(c, res)
	}
	res.Duration = time.Since(start)
	return res
}

// apply makes one event happen: it changes the cache and calls the
// handlers the engine would call, in rule order.
func apply(st *store, runs []*ruleRun, ev Event, errs *[]string) *Error {
	if ev.Type == Tick {
		for _, run := range runs {
			if run.rule.Rule.Name == ev.Rule {
				run.call(scripting.Event{Type: scripting.Tick}, errs)
			}
		}
		// Not found: the rule's top level failed; that error is recorded.
		return nil
	}
	o := ev.Object
	k := keyOf(o)
	name := o.Resource.Kind + " " + objectName(o.Object)
	switch ev.Type {
	case Add:
		if st.get(k) != nil {
			return problem(ev.Pos, "add: %s is already in the cache; use update, or remove it from the fixtures", name)
		}
		st.put(o)
		obj := st.get(k)
		return deliverAll(runs, ev, func(run *ruleRun, w rules.ResolvedWatch) error {
			return run.added(w, obj, ev.Initial, errs)
		})
	case Update:
		old := st.get(k)
		if old == nil {
			return problem(ev.Pos, "update: %s is not in the cache; add it first, or list it in the fixtures", name)
		}
		st.put(o)
		obj := st.get(k)
		return deliverAll(runs, ev, func(run *ruleRun, w rules.ResolvedWatch) error {
			return run.updated(w, old, obj, errs)
		})
	case Delete:
		old := st.get(k)
		if old == nil {
			return problem(ev.Pos, "delete: %s is not in the cache", name)
		}
		st.remove(k)
		return deliverAll(runs, ev, func(run *ruleRun, w rules.ResolvedWatch) error {
			return run.deleted(w, old, errs)
		})
	}
	return problem(ev.Pos, "unknown event type %q", ev.Type)
}

// deliverAll calls fn for every watch of every rule on the event's
// resource; the engine has one informer per watch (and namespace), each
// of which sees the change.
func deliverAll(runs []*ruleRun, ev Event, fn func(*ruleRun, rules.ResolvedWatch) error) *Error {
	gr := ev.Object.Resource.GVR.GroupResource()
	for _, run := range runs {
		for _, w := range run.rule.Watch {
			if w.Resource.GVR.GroupResource() != gr {
				continue
			}
			if err := fn(run, w); err != nil {
				return problem(ev.Pos, "rule %q: spec.watch %s: %v", run.rule.Rule.Name, w.Watch.Resource, err)
			}
		}
	}
	return nil
}

// wants reports whether the engine would call the handler for t: the rule
// lists the event and the script declares the handler.
func (run *ruleRun) wants(t scripting.EventType) bool {
	return run.rule.Rule.Handles(rules.Event(t)) && run.program.HasHandler(t)
}

func (run *ruleRun) added(w rules.ResolvedWatch, obj *unstructured.Unstructured, initial bool, errs *[]string) error {
	ok, err := sees(w.Watch, obj)
	if err != nil || !ok || !run.wants(scripting.Add) {
		return err
	}
	run.call(scripting.Event{Type: scripting.Add, Object: obj, Initial: initial, Resource: w.Resource}, errs)
	return nil
}

// updated delivers an update as the watch's informer would: an object
// that starts to match the watch's selectors is an add, one that stops
// matching a delete (of the last version it matched), and an update
// that changes nothing outside the ignored paths is not delivered.
func (run *ruleRun) updated(w rules.ResolvedWatch, old, obj *unstructured.Unstructured, errs *[]string) error {
	before, err := sees(w.Watch, old)
	if err != nil {
		return err
	}
	after, err := sees(w.Watch, obj)
	if err != nil {
		return err
	}
	switch {
	case before && after:
		if !run.wants(scripting.Update) {
			return nil
		}
		changed := scripting.ChangedPaths(old.Object, obj.Object, run.ignore)
		if len(changed) == 0 {
			return nil
		}
		run.call(scripting.Event{Type: scripting.Update, Object: obj, OldObject: old, Changed: changed, Resource: w.Resource}, errs)
	case after:
		if run.wants(scripting.Add) {
			run.call(scripting.Event{Type: scripting.Add, Object: obj, Resource: w.Resource}, errs)
		}
	case before:
		if run.wants(scripting.Delete) {
			run.call(scripting.Event{Type: scripting.Delete, Object: old, Resource: w.Resource}, errs)
		}
	}
	return nil
}

func (run *ruleRun) deleted(w rules.ResolvedWatch, obj *unstructured.Unstructured, errs *[]string) error {
	ok, err := sees(w.Watch, obj)
	if err != nil || !ok || !run.wants(scripting.Delete) {
		return err
	}
	run.call(scripting.Event{Type: scripting.Delete, Object: obj, Resource: w.Resource}, errs)
	return nil
}

func (run *ruleRun) call(ev scripting.Event, errs *[]string) {
	if err := run.rt.Call(ev); err != nil {
		*errs = append(*errs, err.Error())
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
	res.ActionsDiff = compareActions(c.Expect.Actions, actual)

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
