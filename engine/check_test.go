package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// TestLoadRejectsWhatCheckRejects: scripting.CheckScript is the check that
// kreact run (Load), validate and test share. A rule it rejects (spec.every or
// spec.schedule without onTick, handlers that never run, a handler that
// is not a function, an invalid regular expression) does not load, with
// Check's own words, naming the rule.
func TestLoadRejectsWhatCheckRejects(t *testing.T) {
	rule := func(name, extra, script string) string {
		return `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ` + name + `
spec:
  watch:
  - resource: configmaps
` + extra + `  script: |
` + script
	}
	cases := []struct {
		name, extra, script string
		want                []string // the errors, in order
	}{
		{"every", "  every: 1m\n", "    function onAdd(obj, ctx) {}\n",
			[]string{`every.yaml:4:9: rule "every": spec.every is 1m0s but the script declares no onTick(ctx)`}},
		{"schedule", "  schedule: \"@hourly\"\n", "    function onAdd(obj, ctx) {}\n",
			[]string{`schedule.yaml:4:9: rule "schedule": spec.schedule is "@hourly" but the script declares no onTick(ctx)`}},
		{"nohandler", "", "    function helper() {}\n",
			[]string{`nohandler.yaml:4:9: rule "nohandler": the rule never runs: spec.events lists add, update, delete but the script declares none of onAdd, onUpdate, onDelete`}},
		{"misspelt", "  events: [update]\n", "    function onAdd(obj, ctx) {}\n    function onUpate(old, obj, ctx) {}\n",
			[]string{`misspelt.yaml:4:9: rule "misspelt": the rule never runs: spec.events lists update but the script declares no onUpdate`}},
		{"notfunc", "", "    var onAdd = 5;\n",
			[]string{`notfunc.yaml:9:9: rule "notfunc": script: onAdd is declared but is not a function`}},
		{"regexp", "", "    function onAdd(obj, ctx) {\n      if (obj) /(/;\n    }\n",
			[]string{`regexp.yaml:10:16: rule "regexp": script: invalid regular expression /(/: Unterminated group`}},
	}
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	eng := engine.New(nil, mapper, nil, restmapper.NewStatic(restmapper.Builtin()), engine.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := rules.Parse(c.name+".yaml", []byte(rule(c.name, c.extra, c.script)))
			if err != nil {
				t.Fatal(err)
			}
			_, problems := scripting.CheckScript(rs[0])
			var got []string
			for _, p := range problems.Errors() {
				got = append(got, p.Error())
				if p.Pos.Rule != c.name {
					t.Errorf("%s: Pos.Rule = %q, want %q", p, p.Pos.Rule, c.name)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("Check errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			err = eng.Load(ctx, rs)
			var re *diag.Error
			if !errors.As(err, &re) || re.Pos.Rule != c.name || err.Error() != strings.Join(c.want, "\n") {
				t.Fatalf("Load = %v, want Check's errors", err)
			}
			if st := eng.Status(); len(st) != 0 {
				t.Fatalf("a rejected rule runs or waits: %+v", st)
			}
		})
	}
}
