package metrics

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// The leadership states of a Readiness.
const (
	alone    int32 = iota // leader election off (or not started yet): readiness follows the engine
	standing              // campaigning for the lease, not running rules
	leading               // holding the lease, running rules
)

// Readiness is kreact run's /readyz check (ServerOptions.Ready): it knows
// how many rules are loaded and whether this replica leads, and records
// both in a Recorder too. Its methods are safe for concurrent use.
type Readiness struct {
	rec        *Recorder
	rules      atomic.Int64
	leadership atomic.Int32
	// objects is set when rule objects are run (WaitForObjects), and
	// objectsLoaded once they were first loaded.
	objects, objectsLoaded atomic.Bool
}

// WaitForObjects makes Check wait for rule objects to be loaded once
// (ObjectsLoaded) instead of for a rule: with rule objects, running no
// rule is what a cluster where no one has applied one yet asks for.
func (r *Readiness) WaitForObjects() { r.objects.Store(true) }

// ObjectsLoaded records that the rule objects were loaded.
func (r *Readiness) ObjectsLoaded() { r.objectsLoaded.Store(true) }

// NewReadiness returns a Readiness that also records in rec (which may be
// nil).
func NewReadiness(rec *Recorder) *Readiness { return &Readiness{rec: rec} }

// RulesLoaded records the size of the rule set just loaded.
func (r *Readiness) RulesLoaded(n int) {
	r.rules.Store(int64(n))
	if r.rec != nil {
		r.rec.RulesLoaded(n)
	}
}

// SetLeading records whether this replica runs the rules (true) or stands
// by for the lease (false).
func (r *Readiness) SetLeading(lead bool) {
	if lead {
		r.leadership.Store(leading)
	} else {
		r.leadership.Store(standing)
	}
	if r.rec != nil {
		r.rec.Leading(lead)
	}
}

// Check is /readyz: a replica standing by for the lease is ready (it is
// healthy and waiting, and a rolling update must be able to proceed past
// it); otherwise at least one rule must be loaded and every running rule
// must have caught up with its watches: behind lists the rules that have
// not (engine.RulesBehind, which the "caches synced" line of kreact run
// waits for too, so the two never disagree). behind is nil before there
// are rules to ask.
func (r *Readiness) Check(behind func() []string) error {
	if r.leadership.Load() == standing {
		return nil
	}
	if behind == nil {
		return errors.New("engine not started")
	}
	switch {
	case r.objects.Load() && !r.objectsLoaded.Load():
		return errors.New("rule objects not loaded yet")
	case !r.objects.Load() && r.rules.Load() == 0:
		return errors.New("no rules loaded")
	}
	if behind := behind(); len(behind) > 0 {
		return fmt.Errorf("waiting for caches to sync: rules %s", strings.Join(behind, ", "))
	}
	return nil
}
