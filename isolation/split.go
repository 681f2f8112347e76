package isolation

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/source"
)

// ChildEnv is set to "1" in the environment of the kreact run that a
// Supervisor starts: that process runs only the isolated rules.
const ChildEnv = "KREACT_ISOLATED_CHILD"

// Engine is what Split hands its side's rules to: engine.Engine.
type Engine interface {
	Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error
	Status() []engine.Status
}

// Split is an Engine that loads only one side's rules into the engine
// under it: the isolated rules (spec.isolate) if Isolated is set, else the
// others.
type Split struct {
	Engine   Engine
	Isolated bool
	// Found, if set, is called at each Load whose rule set has an
	// isolated rule that this side does not run: a Supervisor's Want.
	Found func()
	// handedOver is how many isolated rules the last Load left to the
	// other side.
	handedOver atomic.Int64
	// Refuse, if set, is why isolated rules cannot run: each is reported
	// as an error at its rule instead of being left to the other side,
	// and its file is treated as one that did not load (keepSources).
	Refuse string
}

// Rules returns the rules of rs that run on this side.
func (s *Split) Rules(rs []*rules.Rule) []*rules.Rule {
	var mine []*rules.Rule
	for _, r := range rs {
		if r.Isolate == s.Isolated {
			mine = append(mine, r)
		}
	}
	return mine
}

// Load loads this side's rules of rs; see engine.Engine.Load.
func (s *Split) Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error {
	var refused source.ErrorList
	handOver := 0
	for _, r := range rs {
		if s.Isolated || !r.Isolate {
			continue // only the other side hands rules over
		}
		if s.Refuse != "" {
			pos := r.Pos
			pos.Rule = r.Name
			refused.Addf(pos, "spec.isolate: %s", s.Refuse)
			// As for a file that does not load: what ran from it before
			// keeps running.
			keepSources = append(keepSources, r.Source)
			continue
		}
		handOver++
	}
	s.handedOver.Store(int64(handOver))
	if handOver > 0 && s.Found != nil {
		s.Found()
	}
	return errors.Join(refused.Err(), s.Engine.Load(ctx, s.Rules(rs), keepSources...))
}

// HandedOver is how many isolated rules the last Load left to the other
// side: the rules a kreact run runs in its isolated process.
func (s *Split) HandedOver() int { return int(s.handedOver.Load()) }

// Status is the engine's.
func (s *Split) Status() []engine.Status { return s.Engine.Status() }
