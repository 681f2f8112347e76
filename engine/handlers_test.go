package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/source"
)

// TestLoadRejectsWhatValidateRejects: a rule whose handlers validate
// rejects (spec.every or spec.schedule without onTick, a script with no
// handler at all) does not load, with validate's own message, while a good
// rule beside it checks as valid.
func TestLoadRejectsWhatValidateRejects(t *testing.T) {
	rule := func(name, extra, script string) string {
		return `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ` + name + `
spec:
  watch:
  - resource: configmaps
` + extra + `  script: |
    ` + script + `
`
	}
	cases := []struct{ name, extra, script, want string }{
		{"every", "  every: 1m\n", "function onAdd(obj, ctx) {}", "spec.every is 1m0s but the script declares no onTick(ctx)"},
		{"schedule", "  schedule: \"@hourly\"\n", "function onAdd(obj, ctx) {}", "spec.schedule is \"@hourly\" but the script declares no onTick(ctx)"},
		{"nohandler", "", "function helper() {}", "the rule never runs"},
	}
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	eng := engine.New(nil, mapper, nil, restmapper.NewStatic(restmapper.Builtin()), engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := rules.Parse(c.name+".yaml", []byte(rule(c.name, c.extra, c.script)))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := engine.Compile(rs[0])
			if err != nil {
				t.Fatal(err)
			}
			var shared []string
			for _, p := range engine.CheckHandlers(rs[0], prog) {
				if !p.Warning {
					shared = append(shared, p.Error())
				}
			}
			if len(shared) != 1 || !strings.Contains(shared[0], c.want) {
				t.Fatalf("CheckHandlers errors = %q, want one containing %q", shared, c.want)
			}
			err = eng.Load(ctx, rs)
			var re *source.Error
			if !errors.As(err, &re) || re.Pos.Rule != c.name || err.Error() != shared[0] {
				t.Fatalf("Load = %v, want the source.Error %q of rule %s", err, shared[0], c.name)
			}
			if st := eng.Status(); len(st) != 0 {
				t.Fatalf("a rejected rule runs or waits: %+v", st)
			}
		})
	}
}
