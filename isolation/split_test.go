package isolation

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
)

// loads records what an Engine was asked to load.
type loads struct {
	mu    sync.Mutex
	names []string
	keep  []string
	count int
}

func (l *loads) Load(_ context.Context, rs []*rules.Rule, keepSources ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = nil
	for _, r := range rs {
		l.names = append(l.names, r.Name)
	}
	l.keep = keepSources
	l.count++
	return nil
}

// loaded returns the names of the last load, and how many loads there were.
func (l *loads) loaded() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.names, l.count
}

func (l *loads) Status() []engine.Status { return nil }

func ruleSet() []*rules.Rule {
	return []*rules.Rule{
		{Name: "plain", Source: "a.yaml", Pos: diag.Position{File: "a.yaml", Line: 4, Col: 9}},
		{Name: "apart", Source: "b.yaml", Isolate: true, Pos: diag.Position{File: "b.yaml", Line: 4, Col: 9}},
	}
}

// wantFunc is a Child that calls itself at each Want.
type wantFunc func()

func (f wantFunc) Want() { f() }

func TestSplitGivesEachSideItsRules(t *testing.T) {
	var parent, child loads
	found := 0
	ps := &Split{Engine: &parent, Child: wantFunc(func() { found++ })}
	cs := &Split{Engine: &child, Isolated: true, Child: wantFunc(func() { t.Error("the isolated side found rules for another side") })}
	if err := ps.Load(t.Context(), ruleSet(), "broken.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := cs.Load(t.Context(), ruleSet(), "broken.yaml"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parent.names, []string{"plain"}) || !slices.Equal(child.names, []string{"apart"}) {
		t.Errorf("parent loaded %v, child %v; want [plain] and [apart]", parent.names, child.names)
	}
	if !slices.Equal(parent.keep, []string{"broken.yaml"}) || !slices.Equal(child.keep, []string{"broken.yaml"}) {
		t.Errorf("files kept: parent %v, child %v; want the broken file on both sides", parent.keep, child.keep)
	}
	if found != 1 {
		t.Errorf("Child.Want called %d times, want 1", found)
	}
	if err := ps.Load(t.Context(), ruleSet()[:1]); err != nil || found != 1 {
		t.Errorf("a set with no isolated rule: err %v, Child.Want called %d times in all, want 1", err, found)
	}
}

func TestSplitRefusesIsolatedRules(t *testing.T) {
	var parent loads
	s := &Split{Engine: &parent, Refuse: "not supported with --shards", Child: wantFunc(func() { t.Error("refused rules were handed over") })}
	err := s.Load(t.Context(), ruleSet())
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("err = %v; want one error", err)
	}
	if got := list[0].Pos; got.Rule != "apart" || got.File != "b.yaml" || got.Line != 4 {
		t.Errorf("error at %+v; want rule apart at b.yaml:4", got)
	}
	if !strings.Contains(err.Error(), "spec.isolate: not supported with --shards") {
		t.Errorf("err = %v", err)
	}
	if !slices.Equal(parent.names, []string{"plain"}) || !slices.Equal(parent.keep, []string{"b.yaml"}) {
		t.Errorf("loaded %v keeping %v; want [plain] keeping [b.yaml], as for a file that does not load", parent.names, parent.keep)
	}
}
