package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

// setLoader keeps the last set loaded into it, and refuses the rules
// named in bad with an error that names them, as Engine.Load does.
type setLoader struct {
	names []string
	keep  []string
	bad   map[string]bool
}

func (l *setLoader) Load(_ context.Context, rs []*rules.Rule, keep ...string) error {
	l.names, l.keep = nil, keep
	var errs diag.ErrorList
	for _, r := range rs {
		l.names = append(l.names, r.Name)
		if l.bad[r.Name] {
			errs.Add(diag.Position{Rule: r.Name, File: r.Source, Line: 1}, "broken")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func (l *setLoader) Status() []Status { return nil }

func named(source string, names ...string) []*rules.Rule {
	var rs []*rules.Rule
	for _, n := range names {
		rs = append(rs, &rules.Rule{Name: n, Source: source, Pos: diag.Position{Rule: n, File: source, Line: 1}})
	}
	return rs
}

func TestCombinedLoadsEveryPartTogether(t *testing.T) {
	ctx := context.Background()
	l := &setLoader{bad: map[string]bool{"b": true, "y": true}}
	c := Combine(l, 2)
	files, objects := c.Part(0), c.Part(1)
	if err := files.Load(ctx, named("f.yaml", "a", "b"), "broken.yaml"); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("files' load: %v, want b's problem", err)
	}
	err := objects.Load(ctx, named("clusterrule/x", "x", "y", "a"), "clusterrule/z")
	if want := []string{"a", "b", "x", "y"}; !slices.Equal(l.names, want) {
		t.Errorf("loaded %v, want %v: both parts, the duplicate once", l.names, want)
	}
	if want := []string{"broken.yaml", "clusterrule/z"}; !slices.Equal(l.keep, want) {
		t.Errorf("kept %v, want %v", l.keep, want)
	}
	msg := err.Error()
	if strings.Contains(msg, `rule "b"`) || strings.Contains(msg, "f.yaml:1: broken") {
		t.Errorf("the objects' load reports the files' problem:\n%s", msg)
	}
	for _, want := range []string{"clusterrule/x:1: broken", `rule "a" is also defined at f.yaml:1, which runs; this one does not`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the objects' load:\n%s\nwant %q", msg, want)
		}
	}
	// A later load of one part keeps the other's rules.
	if err := files.Load(ctx, named("f.yaml", "a")); err != nil {
		t.Errorf("files' second load: %v", err)
	}
	if want := []string{"a", "x", "y"}; !slices.Equal(l.names, want) {
		t.Errorf("loaded %v, want %v", l.names, want)
	}
}
