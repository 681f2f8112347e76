package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
)

func TestRuleCountsSumTheCountersByRule(t *testing.T) {
	r := New()
	r.HandlerCall("a", event.Add, time.Millisecond, nil)
	r.HandlerCall("a", event.Update, time.Millisecond, errors.New("boom"))
	r.HandlerGivenUp("a", event.Update, errors.New("boom"))
	r.HandlerCall("b", event.Add, time.Millisecond, nil)
	r.ActionResult(actions.Result{Action: actions.Action{Rule: "b", Verb: actions.Patch}, Outcome: actions.Failed, Err: errors.New("forbidden")})
	got := r.RuleCounts()
	a, b := got["a"], got["b"]
	if a.Calls != 2 || a.Failures != 1 || a.GivenUp != 1 || a.LastError != "boom" || a.LastErrorAt.IsZero() {
		t.Errorf("a: %+v, want 2 calls, 1 failure, 1 given up, last error boom", a)
	}
	if b.Calls != 1 || b.Failures != 0 || b.LastError != "forbidden" {
		t.Errorf("b: %+v, want 1 call, no failure, last error forbidden (its action's)", b)
	}
}

func TestReadinessWithRuleObjectsWaitsForTheirLoadNotForARule(t *testing.T) {
	r := NewReadiness(nil)
	behind := func() []string { return nil }
	if err := r.Check(behind); err == nil {
		t.Error("ready with no rule loaded")
	}
	r.WaitForObjects()
	r.RulesLoaded(0)
	if err := r.Check(behind); err == nil || err.Error() != "rule objects not loaded yet" {
		t.Errorf("before the objects' load: %v, want them waited for", err)
	}
	r.ObjectsLoaded()
	if err := r.Check(behind); err != nil {
		t.Errorf("rule objects loaded, none of them: %v, want ready", err)
	}
}
