package isolation

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// ChildEnv is set to "1" in the environment of the kreact run that a
// Supervisor starts: that process runs only the isolated rules.
const ChildEnv = "KREACT_ISOLATED_CHILD"

// MoveAfterCPU is the CPU time after which kreact run stops a call and
// moves its rule (Split.CPULimit): thousands
// of times what a handler call takes (about 15µs), and long before a
// looping call's timeout (1s by default). A call stopped so is run again
// in the isolated process, without that limit, as the objects of a rule
// that starts there are replayed. Hostile calls that run on in kreact run
// until their timeout or memory limit are what slow the other rules most
// (see docs/performance.md).
const MoveAfterCPU = 50 * time.Millisecond

// A Move is a version of a rule that misbehaved in kreact run and runs in
// the isolated process from then on: its name and rules.Rule.Fingerprint.
// An edit of the rule is a new version, which starts in kreact run again.
type Move struct {
	Rule        string `json:"rule"`
	Fingerprint string `json:"fingerprint"`
}

// Child is the isolated rules' process as kreact run's Split sees it: a
// *Supervisor. Want asks for it; it must never block.
type Child interface {
	Want()
}

// MovedTo is where kreact run's Split sends the rules it moves: the
// isolated rules' process, a *Supervisor. Tell is given every move so
// far, in the order they were made; it must return quickly.
type MovedTo interface {
	Tell(moves []Move)
}

// Split is an Engine that loads only one side's rules into the engine
// under it: the isolated rules (spec.isolate, and the rules moved after
// they misbehaved) if Isolated is set, else the others.
type Split struct {
	Engine   engine.StatusLoader
	Isolated bool
	// Child, if set, is asked for (Want) at each Load whose rule set has
	// an isolated rule that this side does not run, and at each move.
	Child Child
	// Refuse, if set, is why isolated rules cannot run: each is reported
	// as an error at its rule instead of being left to the other side,
	// and its file is treated as one that did not load (keepSources).
	// Rules are not moved either.
	Refuse string
	// MovedTo, if set on the side that is not Isolated, makes Misbehaved
	// move rules to the other side; it is told every move so far at each
	// one (Tell).
	MovedTo MovedTo
	// Logger receives a line per move. Nil means slog.Default().
	Logger *slog.Logger

	// loading serialises loads: Load, and the loads that follow a move.
	loading sync.Mutex
	// mu guards what follows; it is never held while rules load, because
	// a rule's calls report to Misbehaved while the engine stops it.
	mu    sync.Mutex
	moved map[Move]bool
	// takenBack is set once TakeBack ran: rules no longer move.
	takenBack atomic.Bool
	// ctx, last and keep are the arguments of the last Load, which a move
	// loads again.
	ctx  context.Context
	last []*rules.Rule
	keep []string

	// pokeOnce makes poked, which asks Start for a reload after a move
	// or TakeBack: a pending request covers any number of them, since a
	// reload loads the moves as they are then.
	pokeOnce sync.Once
	poked    chan struct{}
}

// Rules returns the rules of rs that run on this side.
func (s *Split) Rules(rs []*rules.Rule) []*rules.Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*rules.Rule
	for _, r := range rs {
		if s.isolated(r) == s.Isolated {
			mine = append(mine, r)
		}
	}
	return mine
}

// Elsewhere returns the names of the rules of the last Load that run in
// the other process (kreact explain says so, and where to ask).
func (s *Split) Elsewhere() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, r := range s.last {
		if s.isolated(r) != s.Isolated {
			names = append(names, r.Name)
		}
	}
	return names
}

// isolated reports whether r runs in the isolated process. s.mu must be
// held.
func (s *Split) isolated(r *rules.Rule) bool {
	if r.Isolate {
		return true
	}
	return len(s.moved) > 0 && s.moved[Move{r.Name, r.Fingerprint()}]
}

// Load loads this side's rules of rs; see engine.Engine.Load.
func (s *Split) Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error {
	s.loading.Lock()
	defer s.loading.Unlock()
	s.mu.Lock()
	s.ctx, s.last, s.keep = ctx, rs, keepSources
	s.mu.Unlock()
	return s.load(ctx, rs, keepSources)
}

// load is Load; s.loading must be held.
func (s *Split) load(ctx context.Context, rs []*rules.Rule, keepSources []string) error {
	var refused diag.ErrorList
	handOver := 0
	s.mu.Lock()
	for _, r := range rs {
		if s.Isolated || !s.isolated(r) {
			continue // only the other side hands rules over
		}
		if s.Refuse != "" {
			pos := r.Pos
			pos.Rule = r.Name
			refused.Addf(pos, "spec.isolate: %s", s.Refuse)
			// As for a file that does not load: what ran from it before
			// keeps running.
			keepSources = append(slices.Clip(keepSources), r.Source)
			continue
		}
		handOver++
	}
	s.mu.Unlock()
	if handOver > 0 && s.Child != nil {
		s.Child.Want()
	}
	return errors.Join(refused.Err(), s.Engine.Load(ctx, s.Rules(rs), keepSources...))
}

// RunsElsewhere reports whether the other side runs a rule that this
// side's engine removes, with its finalizer if it had one: the last Load's
// rule set has a rule of that name on the other side, and that side can
// run it. It is this side's engine.Options.RunsElsewhere.
func (s *Split) RunsElsewhere(removed *rules.Rule) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.Isolated && s.Refuse != "" {
		return false // nothing runs on the other side
	}
	for _, r := range s.last {
		if r.Name == removed.Name {
			return s.isolated(r) != s.Isolated && (r.Finalizer || !removed.Finalizer)
		}
	}
	return false
}

// Status is the engine's.
func (s *Split) Status() []engine.Status { return s.Engine.Status() }

// Misbehaved is told of every failed call of a rule on this side. If the
// call hogged its process (event.Hogged) and rules can move (MovedTo is
// set, and neither Refuse nor TakeBack forbids it), the version of the
// rule that the last Load ran moves to the isolated process: this side
// stops it (its calls not started are dropped, its queued actions drain,
// see engine.Engine.Load), and the other side starts it, replaying the
// objects it watches as adds, as at every start. It returns at once; the
// loads run in Start.
func (s *Split) Misbehaved(rule string, err error) {
	if !s.moving() || !event.Hogged(err) {
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.last, func(r *rules.Rule) bool { return r.Name == rule })
	// TakeBack may have run meanwhile; it clears moves under s.mu.
	if i < 0 || s.isolated(s.last[i]) || !s.moving() {
		s.mu.Unlock()
		return // already moved, no longer loaded, or taken back
	}
	if s.moved == nil {
		s.moved = make(map[Move]bool)
	}
	s.moved[Move{rule, s.last[i].Fingerprint()}] = true
	s.mu.Unlock()
	s.logger().Warn("rule misbehaved; moving it to the isolated rules' process until its file changes", "rule", rule, "error", err)
	s.poke()
}

var _ MovedFrom = (*Split)(nil)

// TakeBack runs the moved rules on this side again, and moves no more
// rules: the other side's process cannot be started (its Supervisor's
// MovedFrom), and a rule that misbehaves should run here rather than
// nowhere. Rules marked spec.isolate stay with the other side, as asked.
func (s *Split) TakeBack() {
	if s.Isolated || s.takenBack.Swap(true) {
		return
	}
	s.mu.Lock()
	moved := len(s.moved)
	s.moved = nil
	s.mu.Unlock()
	s.logger().Error("isolated rules: their process cannot start; rules that misbehave stay here from now on", "movedRulesTakenBack", moved)
	if moved > 0 {
		s.poke()
	}
}

// CPULimit is MoveAfterCPU while rules can move from this side, else
// zero: the engine.Options.CPULimit of kreact run's engine. A call stopped
// at it moves its rule, and runs again on the other side, without it;
// where rules cannot move, calls run to their timeout.
func (s *Split) CPULimit() time.Duration {
	if !s.moving() {
		return 0
	}
	return MoveAfterCPU
}

// moving reports whether rules can move from this side now.
func (s *Split) moving() bool {
	return s.MovedTo != nil && !s.Isolated && s.Refuse == "" && !s.takenBack.Load()
}

// moves lists s.moved in a stable order. s.mu must be held.
func (s *Split) moves() []Move {
	list := make([]Move, 0, len(s.moved))
	for m := range s.moved {
		list = append(list, m)
	}
	slices.SortFunc(list, func(a, b Move) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return list
}

// SetMoved sets the moved rules on the isolated side, as its parent told
// it, and loads the last rule set again if a Load came before.
func (s *Split) SetMoved(moves []Move) {
	s.mu.Lock()
	s.moved = make(map[Move]bool, len(moves))
	for _, m := range moves {
		s.moved[m] = true
	}
	loaded := s.ctx != nil
	s.mu.Unlock()
	if loaded {
		s.reload()
	}
}

// Start loads the last Load's rule set again after each move and
// TakeBack (Misbehaved returns at once, from a rule's call), until ctx
// ends: a lifecycle.Runnable beside the rule set's loader.
func (s *Split) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.pokes():
			s.reload()
		}
	}
}

// poke asks Start for a reload; it never blocks.
func (s *Split) poke() {
	select {
	case s.pokes() <- struct{}{}:
	default: // a reload is asked for already
	}
}

func (s *Split) pokes() chan struct{} {
	s.pokeOnce.Do(func() { s.poked = make(chan struct{}, 1) })
	return s.poked
}

// reload loads the last Load's rule set again, after the moved rules
// changed.
func (s *Split) reload() {
	s.loading.Lock()
	defer s.loading.Unlock()
	s.mu.Lock()
	ctx, rs, keep := s.ctx, s.last, s.keep
	moves := s.moves()
	s.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return
	}
	if s.MovedTo != nil && !s.Isolated {
		// Told under s.loading, so that the other side hears of the
		// moves in the order they were made.
		s.MovedTo.Tell(moves)
	}
	diag.Log(s.logger(), "rules with errors are not running", s.load(ctx, rs, keep))
}

func (s *Split) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
