package ruleobjects

import (
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

var ref = rules.ObjectRef{Kind: rules.Kind, Namespace: "team", Name: "r"}

func ready(st map[string]any) map[string]any { return previousReady(st) }

func TestStatusSaysWhyARuleDoesNotRun(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	var broken diag.ErrorList
	broken.Add(diag.Position{File: "rule/team/r: spec.script", Line: 2, Col: 7}, "SyntaxError: Unexpected token")
	broken.Add(diag.Position{File: "rule/team/r"}, "spec.watch[0].resource: unknown resource \"widgets\"")
	for _, tc := range []struct {
		name           string
		v              view
		status, reason string
		message        string
	}{
		{"running", view{o: &object{ref: ref, generation: 3, running: 3}, engine: &engine.Status{Rule: "team.r", Running: true, Synced: true}},
			"True", ReasonRunning, "running"},
		{"syncing", view{o: &object{ref: ref, generation: 3, running: 3}, engine: &engine.Status{Rule: "team.r", Running: true}},
			"Unknown", ReasonSyncing, "caches are filling"},
		{"waiting", view{o: &object{ref: ref, generation: 3, running: 3}, engine: &engine.Status{Rule: "team.r", Waiting: "widgets.example.com is not served"}},
			"False", ReasonWaiting, "not served"},
		{"broken, an older version runs", view{o: &object{ref: ref, generation: 4, running: 3, problems: broken}, engine: &engine.Status{Rule: "team.r", Running: true, Synced: true}},
			"False", ReasonInvalid, "generation 4 has 2 problem(s): spec.script:2:7: SyntaxError: Unexpected token; generation 3 keeps running"},
		{"not loaded", view{o: &object{ref: ref, generation: 1}}, "Unknown", ReasonLoading, "not loaded"},
		{"isolated", view{o: &object{ref: ref, generation: 1, running: 1}, elsewhere: true}, "True", ReasonIsolated, "isolated rules' process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status(tc.v, now)
			c := ready(st)
			if c["status"] != tc.status || c["reason"] != tc.reason || !strings.Contains(c["message"].(string), tc.message) {
				t.Errorf("Ready %v, want %s %s %q", c, tc.status, tc.reason, tc.message)
			}
			if c["observedGeneration"] != tc.v.o.generation || st["observedGeneration"] != tc.v.o.generation {
				t.Errorf("observedGeneration %v/%v, want %d", c["observedGeneration"], st["observedGeneration"], tc.v.o.generation)
			}
		})
	}
	lacking := status(view{o: &object{ref: ref, generation: 1, running: 1}, engine: &engine.Status{Rule: "team.r", Running: true, Synced: true,
		Missing: []engine.Missing{{Identity: "system:serviceaccount:team:default", Verb: "delete", Resource: "secrets", Namespace: "team", What: "delete"}}}}, now)
	if c := ready(lacking); c["status"] != "True" || !strings.Contains(c["message"].(string), "system:serviceaccount:team:default may not do 1 thing") {
		t.Errorf("Ready %v, want True naming the ServiceAccount", c)
	}
	if p := lacking["problems"].([]any)[0].(map[string]any); p["severity"] != "warning" || p["field"] != "spec.permissions" ||
		p["message"] != "system:serviceaccount:team:default may not delete secrets in team (delete)" {
		t.Errorf("problem %v, want a warning naming the ServiceAccount, verb, resource and namespace", p)
	}
	st := status(view{o: &object{ref: ref, generation: 4, problems: broken}}, now)
	probs := st["problems"].([]any)
	want := []map[string]any{
		{"field": "spec.script", "position": "2:7", "message": "SyntaxError: Unexpected token", "severity": "error"},
		{"field": "spec.watch[0].resource", "message": "unknown resource \"widgets\"", "severity": "error"},
	}
	for i, w := range want {
		for k, v := range w {
			if probs[i].(map[string]any)[k] != v {
				t.Errorf("problem %d: %v, want %s %q", i, probs[i], k, v)
			}
		}
	}
}

func TestStatusKeepsTheTransitionTimeAndCounts(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	o := &object{ref: ref, generation: 1, running: 1}
	eng := &engine.Status{Rule: "team.r", Running: true, Synced: true}
	first := status(view{o: o, engine: eng}, t0)
	o.status = first
	later := status(view{o: o, engine: eng, counts: metrics.RuleCounts{Calls: 5, Failures: 1, GivenUp: 1, LastError: "boom", LastErrorAt: t0},
		actions: actions.Stats{Succeeded: 4, GaveUp: 2}}, t0.Add(time.Hour))
	if got := ready(later)["lastTransitionTime"]; got != t0.Format(time.RFC3339) {
		t.Errorf("lastTransitionTime %v, want the first's: the condition did not change", got)
	}
	if later["calls"] != int64(5) || later["failures"] != int64(1) || later["actions"] != int64(4) || later["givenUp"] != int64(3) {
		t.Errorf("counts %v %v %v %v, want 5 calls, 1 failure, 4 actions, 3 given up", later["calls"], later["failures"], later["actions"], later["givenUp"])
	}
	r1, c1 := split(first)
	r2, c2 := split(later)
	if r1 != r2 {
		t.Errorf("the status changed beside its counts:\n%s\n%s", r1, r2)
	}
	if c1 == c2 {
		t.Error("the counts did not change")
	}
}
