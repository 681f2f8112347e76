package isolation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// hog is the error of a call stopped at its timeout while it computed.
var hog = &event.ScriptError{Rule: "plain", Handler: "onAdd", Message: "timed out", Timeout: true, CPU: time.Second}

// told records what a Split's MovedTo was told.
type told struct {
	mu    sync.Mutex
	moves [][]Move
}

func (t *told) Tell(m []Move) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.moves = append(t.moves, m)
}

func (t *told) last() []Move {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.moves) == 0 {
		return nil
	}
	return t.moves[len(t.moves)-1]
}

// started runs s's reloads after moves (Start) until the test ends.
func started(t *testing.T, s *Split) *Split {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return s
}

func TestMisbehavedMovesTheRuleToTheOtherSide(t *testing.T) {
	var parent, child loads
	var heard told
	var logs testcluster.LogBuffer
	found := 0
	rs := ruleSet()
	ps := started(t, &Split{Engine: &parent, MovedTo: &heard, Child: wantFunc(func() { found++ }), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := ps.Load(t.Context(), rs); err != nil {
		t.Fatal(err)
	}

	// Errors that do not hog the process move nothing.
	for _, err := range []error{
		errors.New("boom"),
		&event.ScriptError{Message: "Error: boom", CPU: time.Second},
		&event.ScriptError{Message: "timed out", Timeout: true, CPU: 50 * time.Microsecond}, // waited, for kreact.http say
	} {
		ps.Misbehaved("plain", err)
	}
	ps.Misbehaved("unknown", hog)
	if names, n := parent.loaded(); n != 1 || heard.last() != nil {
		t.Fatalf("a call that did not hog moved its rule: %d loads, last %v, told %v", n, names, heard.last())
	}

	ps.Misbehaved("plain", fmt.Errorf("handler: %w", hog))
	testcluster.Eventually(t, "the parent to stop running plain", func() bool {
		names, _ := parent.loaded()
		return len(names) == 0
	})
	want := []Move{{Rule: "plain", Fingerprint: rs[0].Fingerprint()}}
	if !slices.Equal(heard.last(), want) {
		t.Errorf("told %v; want %v", heard.last(), want)
	}
	if found != 2 {
		t.Errorf("Child.Want called %d times; want 2, at the load and at the move", found)
	}
	if !strings.Contains(logs.String(), "rule misbehaved; moving it to the isolated rules' process") || !strings.Contains(logs.String(), "rule=plain") {
		t.Errorf("the move is not logged with its rule:\n%s", logs.String())
	}
	// A second hogging call of the moved rule, still under way in the
	// parent as it stopped, moves nothing again.
	ps.Misbehaved("plain", hog)
	if len(heard.moves) != 1 {
		t.Errorf("told %d times; want once", len(heard.moves))
	}

	// The child runs the moved rule, and the parent stays apart from it.
	cs := &Split{Engine: &child, Isolated: true}
	cs.SetMoved(heard.last())
	if err := cs.Load(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	if names, _ := child.loaded(); !slices.Equal(names, []string{"plain", "apart"}) {
		t.Errorf("the child loaded %v; want [plain apart]", names)
	}
	if !ps.RunsElsewhere(rs[0]) || cs.RunsElsewhere(rs[0]) {
		t.Errorf("RunsElsewhere(plain): parent %v, child %v; want true and false", ps.RunsElsewhere(rs[0]), cs.RunsElsewhere(rs[0]))
	}

	// An edit is a new version: both sides run it in the parent again.
	edited := ruleSet()
	edited[0].Description = "edited"
	if err := ps.Load(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	if err := cs.Load(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	pn, _ := parent.loaded()
	cn, _ := child.loaded()
	if !slices.Equal(pn, []string{"plain"}) || !slices.Equal(cn, []string{"apart"}) {
		t.Errorf("after an edit of plain: parent %v, child %v; want [plain] and [apart]", pn, cn)
	}
}

func TestMisbehavedMovesNothingWhereItCannot(t *testing.T) {
	var heard told
	for name, s := range map[string]*Split{
		"without MovedTo": {},
		"refused":         {MovedTo: &heard, Refuse: "not supported with --shards"},
		"isolated side":   {MovedTo: &heard, Isolated: true},
	} {
		var l loads
		s.Engine = &l
		started(t, s)
		_ = s.Load(t.Context(), ruleSet())
		s.Misbehaved("plain", hog)
		s.Misbehaved("apart", hog)
		time.Sleep(10 * time.Millisecond)
		if _, n := l.loaded(); n != 1 || heard.last() != nil {
			t.Errorf("%s: %d loads, told %v; want no move", name, n, heard.last())
		}
	}
}

func TestRunsElsewhereKeepsFinalizersOnlyForTheOtherSide(t *testing.T) {
	rs := ruleSet()
	rs[1].Finalizer = true
	ps := &Split{Engine: &loads{}}
	cs := &Split{Engine: &loads{}, Isolated: true}
	_ = ps.Load(t.Context(), rs)
	_ = cs.Load(t.Context(), rs)
	withFinalizer := func(r *rules.Rule) *rules.Rule { c := *r; c.Finalizer = true; return &c }
	for _, c := range []struct {
		name string
		s    *Split
		r    *rules.Rule
		want bool
	}{
		{"parent, isolated rule", ps, rs[1], true},
		{"parent, its own rule", ps, rs[0], false},
		{"child, the parent's rule", cs, rs[0], true},
		{"child, the parent's rule, which dropped its finalizer", cs, withFinalizer(rs[0]), false},
		{"child, a rule removed for good", cs, &rules.Rule{Name: "gone"}, false},
		{"refused", &Split{Engine: &loads{}, Refuse: "no", last: rs}, rs[1], false},
	} {
		if got := c.s.RunsElsewhere(c.r); got != c.want {
			t.Errorf("%s: RunsElsewhere = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestListenSetsMovesBeforeReturning(t *testing.T) {
	var child loads
	cs := &Split{Engine: &child, Isolated: true, Logger: slog.New(slog.DiscardHandler)}
	r, w := io.Pipe()
	defer r.Close()
	rs := ruleSet()
	go func() { _, _ = io.WriteString(w, `{"moved":[]}`+"\n") }()
	if err := Listen(cs, r); err != nil {
		t.Fatal(err)
	}
	_ = cs.Load(t.Context(), rs)
	if names, _ := child.loaded(); !slices.Equal(names, []string{"apart"}) {
		t.Fatalf("loaded %v; want [apart]", names)
	}
	fmt.Fprintf(w, `{"moved":[{"rule":"plain","fingerprint":%q}]}`+"\n", rs[0].Fingerprint())
	testcluster.Eventually(t, "the moved rule to load", func() bool {
		names, _ := child.loaded()
		return slices.Equal(names, []string{"plain", "apart"})
	})
	w.Close()
}

func TestListenRefusesABrokenMessage(t *testing.T) {
	err := Listen(&Split{Engine: &loads{}, Isolated: true}, strings.NewReader("moved plain\n"))
	if err == nil || !strings.Contains(err.Error(), "a message from kreact run") {
		t.Errorf("err = %v", err)
	}
	if err := Listen(&Split{Engine: &loads{}, Isolated: true}, strings.NewReader("")); err != nil {
		t.Errorf("no message at all: %v", err)
	}
}

func TestTakeBackRunsMovedRulesHereAndEndsTheCPULimit(t *testing.T) {
	var parent loads
	var heard told
	rs := ruleSet()
	ps := started(t, &Split{Engine: &parent, MovedTo: &heard, Logger: slog.New(slog.DiscardHandler)})
	if ps.CPULimit() != MoveAfterCPU {
		t.Errorf("CPULimit = %v where rules move, want %v", ps.CPULimit(), MoveAfterCPU)
	}
	_ = ps.Load(t.Context(), rs)
	ps.Misbehaved("plain", hog)
	testcluster.Eventually(t, "plain to move", func() bool { names, _ := parent.loaded(); return len(names) == 0 })

	ps.TakeBack()
	testcluster.Eventually(t, "plain to run here again", func() bool {
		names, _ := parent.loaded()
		return slices.Equal(names, []string{"plain"})
	})
	if ps.CPULimit() != 0 {
		t.Errorf("CPULimit = %v after TakeBack, want none: calls must be able to finish where they run", ps.CPULimit())
	}
	_, loadsBefore := parent.loaded()
	ps.Misbehaved("plain", hog)
	time.Sleep(10 * time.Millisecond)
	if _, n := parent.loaded(); n != loadsBefore {
		t.Error("a rule moved after TakeBack")
	}
	for _, s := range []*Split{{}, {MovedTo: &heard, Refuse: "no"}, {MovedTo: &heard, Isolated: true}} {
		if s.CPULimit() != 0 {
			t.Errorf("CPULimit = %v where rules cannot move (%+v)", s.CPULimit(), s)
		}
	}
}

func TestMovesWaitForStart(t *testing.T) {
	// The reload after a move runs in Start, which owns it: without
	// Start nothing is reloaded, and Start ends with its context.
	var parent loads
	var heard told
	ps := &Split{Engine: &parent, MovedTo: &heard, Logger: slog.New(slog.DiscardHandler)}
	if err := ps.Load(t.Context(), ruleSet()); err != nil {
		t.Fatal(err)
	}
	ps.Misbehaved("plain", hog)
	ps.Misbehaved("plain", hog)
	time.Sleep(20 * time.Millisecond)
	if _, n := parent.loaded(); n != 1 {
		t.Fatalf("%d loads before Start; want only the first", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ps.Start(ctx) }()
	testcluster.Eventually(t, "the move's reload", func() bool {
		names, _ := parent.loaded()
		return len(names) == 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
}
