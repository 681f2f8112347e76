package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Kind is what an operation does.
type Kind string

// The operations. Object operations act on ConfigMaps ("configmaps"),
// widgets, a custom resource with a status subresource ("widgets"), or
// gadgets, one without ("gadgets").
const (
	Create   Kind = "create"
	SetData  Kind = "set-data"     // ConfigMap data.v, or a widget's spec.n
	SetLabel Kind = "set-label"    // label l, which the selector probes select on
	Annotate Kind = "annotate"     // annotation chaos/ignored (p-fin ignores it)
	SetReady Kind = "set-ready"    // a widget's spec.ready
	SetState Kind = "set-status"   // a widget's status.note, through the status subresource
	Delete   Kind = "delete"       // the object; ConfigMaps wait on p-fin's finalizer
	Wait     Kind = "wait"         // nothing for Down: timers fall due
	Edit     Kind = "edit-rule"    // a rule file, changed: the rule restarts
	BadEdit  Kind = "break-rule"   // a rule file, broken for Down, then mended
	Term     Kind = "stop-kreact"  // SIGTERM to a replica, started again after Down
	Kill     Kind = "kill-kreact"  // SIGKILL to a replica, started again after Down
	StartRep Kind = "start-kreact" // a replica that is down (with -shards: one added)
	APIDown  Kind = "restart-apiserver"
	// Upgrade replaces a replica that runs the previous build (-from)
	// with this one: SIGTERM, as a rolling update sends, and this build
	// started after Down. Runs with -from get one per replica slot, spread
	// over the run; the generator never draws it.
	Upgrade Kind = "upgrade-kreact"
)

// Forever, as an Op's Down, keeps a stopped replica down until a StartRep
// of it or the end of the operations.
const Forever = -1

// Op is one operation.
type Op struct {
	Kind     Kind          `json:"kind"`
	Resource string        `json:"resource,omitempty"`
	Name     string        `json:"name,omitempty"`
	Value    string        `json:"value,omitempty"`
	Rule     string        `json:"rule,omitempty"`
	Slot     int           `json:"slot,omitempty"`
	Down     time.Duration `json:"down,omitempty"`
	// Pause is how long the checker waits after the operation.
	Pause time.Duration `json:"pause,omitempty"`
}

func (o Op) String() string {
	s := string(o.Kind)
	switch {
	case o.Resource != "":
		s += " " + o.Resource + "/" + o.Name
		if o.Value != "" {
			s += "=" + o.Value
		}
	case o.Rule != "":
		s += " " + o.Rule
	case o.Kind == Term || o.Kind == Kill || o.Kind == StartRep || o.Kind == Upgrade:
		s += fmt.Sprintf(" replica %d", o.Slot)
	}
	if o.Down == Forever {
		s += " (until started)"
	} else if o.Down > 0 {
		s += " for " + o.Down.String()
	}
	return s
}

// Faults says which faults a run injects.
type Faults struct {
	Restarts  bool // SIGTERM and SIGKILL of kreact
	APIServer bool // API server restarts
	Edits     bool // rule edits and broken edits
	Shards    bool // several replicas with --shards, added and removed
}

// Generator makes a seed's operations, one at a time: the same seed and
// faults give the same sequence.
type Generator struct {
	r      *rand.Rand
	faults Faults
	// bag holds the fault kinds still to draw: each enabled kind comes
	// once per round, in a seeded order, so that a short run has every
	// kind of fault.
	bag []Kind
}

// NewGenerator returns the generator of seed.
func NewGenerator(seed uint64, faults Faults) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, 0x6b7265616374)), faults: faults}
}

// names is the pool of object names: small, so that objects are deleted
// and created again under the same name.
var names = []string{"a", "b", "c", "d", "e", "f"}

// Next returns the next operation.
func (g *Generator) Next() Op {
	r := g.r
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond }
	// About one operation in 25 is a fault: one every few seconds, with
	// quiet spans between them where every guarantee holds in full.
	if r.IntN(100) < 5 {
		if op, ok := g.fault(ms); ok {
			return op
		}
	}
	if r.IntN(100) < 3 {
		return Op{Kind: Wait, Down: ms(1000, 3500)}
	}
	// p-sel2's edits switch its selector (selectorOf): besides the
	// fault bag's edits, one operation in 25 is one, amid the writes,
	// so that p-sel's informer is restarted without a selector (a
	// hand-over) under load: an edit to an odd revision does it when
	// the informer still takes the selector to the server (no switch
	// since kreact started), which the kills bring back.
	if g.faults.Edits && r.IntN(100) < 4 {
		return Op{Kind: Edit, Rule: "p-sel2", Pause: ms(0, 250)}
	}
	op := Op{Name: names[r.IntN(len(names))], Pause: ms(0, 250)}
	switch r.IntN(6) {
	case 0, 1:
		op.Resource = "widgets"
		op.Kind = []Kind{Create, Create, SetData, SetLabel, SetReady, SetReady, SetState, Delete}[r.IntN(8)]
	case 2:
		// Without a status subresource, status is the object's: a write
		// of it is a change p-cond sees, so gadgets get none.
		op.Resource = "gadgets"
		op.Kind = []Kind{Create, Create, SetData, SetLabel, SetReady, SetReady, Delete}[r.IntN(7)]
	default:
		op.Resource = "configmaps"
		// Label writes twice as often as others: half of them move the
		// object into or out of p-sel's selector.
		op.Kind = []Kind{Create, Create, SetData, SetData, SetLabel, SetLabel, Annotate, Delete}[r.IntN(8)]
	}
	switch op.Kind {
	case SetData, SetState:
		op.Value = fmt.Sprint(r.IntN(1000))
	case SetLabel:
		// x: p-perm's copy is refused; a and b are in p-sel's
		// selector, c and x out (selectorOf).
		op.Value = []string{"a", "b", "c", "x"}[r.IntN(4)]
	case Annotate:
		op.Value = fmt.Sprint(r.IntN(1000))
	case SetReady, Create:
		op.Value = []string{"true", "false"}[r.IntN(2)]
	}
	return op
}

// fault returns a fault operation among those enabled.
func (g *Generator) fault(ms func(lo, hi int) time.Duration) (Op, bool) {
	r := g.r
	if len(g.bag) == 0 {
		if g.faults.Restarts || g.faults.Shards {
			g.bag = append(g.bag, Term, Kill, Kill)
		}
		if g.faults.Shards {
			g.bag = append(g.bag, StartRep)
		}
		if g.faults.APIServer {
			g.bag = append(g.bag, APIDown)
		}
		if g.faults.Edits {
			g.bag = append(g.bag, Edit, BadEdit)
		}
		r.Shuffle(len(g.bag), func(i, j int) { g.bag[i], g.bag[j] = g.bag[j], g.bag[i] })
	}
	if len(g.bag) == 0 {
		return Op{}, false
	}
	kind := g.bag[0]
	g.bag = g.bag[1:]
	op := Op{Kind: kind, Pause: ms(0, 500)}
	switch op.Kind {
	case Term, Kill:
		op.Down = ms(0, 4000)
		if g.faults.Shards {
			op.Slot = r.IntN(maxReplicas)
			if r.IntN(3) == 0 {
				op.Down = Forever
			}
		}
	case StartRep:
		op.Slot = r.IntN(maxReplicas)
	case APIDown:
		op.Down = ms(300, 3000)
	case Edit, BadEdit:
		op.Rule = probeNames[r.IntN(len(probeNames))]
		if op.Kind == BadEdit {
			op.Down = ms(500, 3000)
		}
	}
	return op, true
}

// maxReplicas is how many replicas a run with -shards may have; it starts
// with two.
const maxReplicas = 3
