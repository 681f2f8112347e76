package main

import (
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"

	"slices"
	"strings"
	"testing"
	"time"
)

// The oracle flags the histories of the bugs it was written to find, and
// allows what the docs allow.
func TestOracle(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	base := func() *History {
		// Process 0 ended when 1 started: the selector probes' calls
		// of pselSaw are in 0, so that the final state (which these
		// histories leave out) is not checked against them.
		return &History{Start: t0, OpsEnd: at(100), End: at(120), Procs: []Proc{{Start: t0, End: at(50)}, {Start: at(50)}}}
	}
	// pselSaw gives p-sel, with delivery every, its call for each of
	// writes, all in its selector, and an onDelete after the last of an
	// object deleted (held by p-fin's finalizer until then): the
	// histories here are about other probes.
	pselSaw := func(writes []Write) []Call {
		var out []Call
		for _, w := range writes {
			if w.Kind == Delete {
				last := slices.MaxFunc(writes, func(a, b Write) int { return a.At.Compare(b.At) })
				out = append(out, Call{Rule: "p-sel", Handler: "onDelete", UID: w.UID, RV: slices.MaxFunc(writes, func(a, b Write) int { return int(a.RV - b.RV) }).RV + 1,
					L: "a", Sel: "a,b", At: last.At.Add(200 * time.Millisecond)})
				continue
			}
			c := Call{Rule: "p-sel", Handler: "onUpdate", UID: w.UID, RV: w.RV, L: "a", OldL: "a", Sel: "a,b", Changed: "data.v", At: w.At.Add(100 * time.Millisecond)}
			if w.Kind == Create {
				c.Handler = "onAdd"
			}
			out = append(out, c)
		}
		return out
	}
	cm := func(kind Kind, rv int64, path string, s float64) Write {
		return Write{Kind: kind, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, Path: path, At: at(s)}
	}
	// redelivery is a clean history, a kill at 49 s and p-every's second
	// call for the last change, an initial add by process proc at when.
	redelivery := func(h *History, proc int, when time.Time) {
		h.Writes = []Write{cm(Create, 10, "", 1), cm(SetData, 12, "data", 2)}
		h.Procs[0].End, h.Procs[0].Killed = at(49), true
		h.Faults = []Fault{{Kind: Kill, From: at(49), To: at(50)}}
		h.Calls = []Call{
			{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 11, Once: true, At: at(1.1)},
			{Rule: "p-fin", Handler: "onUpdate", UID: "u1", OldRV: 11, RV: 12, At: at(2.1)},
			{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
			{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: "data.v", At: at(2.1)},
			{Proc: proc, Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 12, Initial: true, At: when},
		}
		h.Final.ConfigMaps = []Object{{Name: "a", UID: "u1", Annotations: map[string]string{"once.kreact.dev/p-fin": ""}, Finalizers: []string{"kreact.dev/p-fin"}, Data: map[string]string{"v": "1"}}}
		h.Final.Copies = []Object{{Name: "copy-a", Data: map[string]string{"v": "1"}}}
		h.Calls = append(h.Calls, Call{Rule: "p-sel", Handler: "onAdd", UID: "u1", RV: 10, L: "a", Sel: "a,b", At: at(1.1)},
			Call{Rule: "p-sel", Handler: "onUpdate", UID: "u1", RV: 12, L: "a", OldL: "a", Sel: "a,b", Changed: "data.v", At: at(2.1)})
		slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
	}
	tests := []struct {
		name string
		h    func(h *History)
		want []string // guarantees broken
	}{
		{"a clean history", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(SetData, 12, "data", 2)}
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 11, Once: true, Deadline: at(3.1), At: at(1.1)},
				{Rule: "p-fin", Handler: "onUpdate", UID: "u1", OldRV: 11, RV: 12, Deadline: at(4.1), At: at(2.1)},
				{Rule: "p-fin", Handler: "onTimer", UID: "u1", RV: 12, At: at(4.2)},
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: "data.v", At: at(2.1)},
			}
			h.Final.ConfigMaps = []Object{{Name: "a", UID: "u1", Annotations: map[string]string{"once.kreact.dev/p-fin": ""}, Finalizers: []string{"kreact.dev/p-fin"}, Data: map[string]string{"v": "1"}}}
			h.Final.Copies = []Object{{Name: "copy-a", Data: map[string]string{"v": "1"}}}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, nil},
		// Seed 6205: kreact killed 13.6 s after a write, past slack; the
		// next process gives the object's state again as its initial add.
		{"a start long after a change gives its state again", func(h *History) {
			redelivery(h, 1, at(51))
		}, nil},
		{"the same process calls twice for a change", func(h *History) {
			redelivery(h, 0, at(30))
		}, []string{"delivery every calls once per change"}},
		{"bug 1: the once marker calls onUpdate", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1)}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, Once: true, At: at(1.1)},
				{Rule: "p-fin", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 11, Changed: "metadata.annotations", At: at(1.2)},
			}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, []string{"onUpdate only for a change the rule sees"}},
		{"bug 3: two onDelete for one delete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(5)}}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.2)},
			}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, []string{"one onDelete per delete"}},
		{"two onDelete across a kill are allowed", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(5)}}
			h.Faults = []Fault{{Kind: Kill, From: at(5.15), To: at(6)}}
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Proc: 0, Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Proc: 1, Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(6.5)},
			}
		}, nil},
		{"a held delete never called", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(5)}}
			h.Calls = []Call{{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}, {Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, []string{"one onDelete per delete"}},
		{"a call after onDelete", func(h *History) {
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", At: at(1)},
				{Rule: "p-fin", Handler: "onTimer", UID: "u1", At: at(2)},
			}
		}, []string{"nothing follows onDelete", "timers are not early and not lost"}},
		{"a change that never arrives", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(SetData, 12, "data", 2)}
			h.Calls = []Call{{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, Once: true, At: at(1.1)}}
		}, []string{"every change reaches the rule", "delivery every calls once per change", "delivery every sees each move across a selector"}},
		{"an annotation p-fin ignores reaches p-every only", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(Annotate, 12, "metadata.annotations", 2)}
			h.Calls = []Call{{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}, {Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: `metadata.annotations["chaos/ignored"]`, At: at(2.1)}}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, nil},
		{"a projected rule called for a path it does not keep", func(h *History) {
			h.Calls = []Call{{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: "metadata.generation", At: at(2.1)}}
		}, []string{"onUpdate only for a change the rule sees"}},
		{"a change of an object being deleted may come after its onDelete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(5)}, cm(SetData, 14, "data", 5.2)}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 14, Changed: "data.v", At: at(5.3)},
				{Rule: "p-every", Handler: "onDelete", UID: "u1", RV: 14, At: at(5.4)},
			}
			h.Calls = append(h.Calls, pselSaw(h.Writes)...)
			slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		}, nil},
		{"a change before a held delete must reach onDelete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(SetData, 12, "data", 4), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(5)}}
			h.Faults = []Fault{{Kind: Kill, From: at(3), To: at(8)}}
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 11, At: at(9)},
			}
		}, []string{"every change reaches the rule"}},
		{"once true twice", func(h *History) {
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", Once: true, At: at(1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", Once: true, At: at(3)},
			}
		}, []string{"kreact.once is true once"}},
		{"a timer that fires early, and one that never fires", func(h *History) {
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", Deadline: at(3), At: at(1)},
				{Rule: "p-fin", Handler: "onTimer", UID: "u1", At: at(2)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u2", Deadline: at(7), At: at(5)},
			}
		}, []string{"timers are not early and not lost"}},
		{"a condition that keeps being written", func(h *History) {
			h.Writes = []Write{{Kind: Create, Resource: "gadgets", Name: "w", UID: "w1", RV: 10, Value: "true", At: at(1)}}
			h.Calls = []Call{{Rule: "p-cond", Handler: "onAdd", UID: "w1", RV: 10, At: at(1.1)}}
			h.Final.Gadgets = []Object{{Kind: "Gadget", Name: "w", UID: "w1", Generation: 3, Ready: "true",
				Conditions: []Condition{{Type: "Ready", Status: "True", ObservedGeneration: 3, LastTransitionTime: at(1)}}}}
			h.Final.Owned = []Object{{Name: "g-w", Owners: []Owner{{UID: "w1", Controller: true}}, Data: map[string]string{"ready": "true"}}}
			h.Final.Generations = map[string]int64{"w1": 9}
		}, []string{"conditions follow the object"}},
		{"two ticks from two replicas", func(h *History) {
			h.Calls = []Call{{Proc: 0, Rule: "p-tick", At: at(60)}, {Proc: 1, Rule: "p-tick", At: at(60.2)}, {Proc: 0, Rule: "p-tick", At: at(62)}}
		}, []string{"one tick at a time, and ticks go on"}},
		{"a write where permissions refuse", func(h *History) {
			h.Final.Forbidden = []Object{{Name: "copy-a"}}
		}, []string{"actions stay within spec.permissions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base()
			tt.h(h)
			wantBroken(t, h, nil, tt.want)
		})
	}
}

// Every guarantee names the docs that make it, so that a reader can
// compare the oracle with them.
// wantBroken checks h and fails t unless the guarantees it breaks, among
// only (nil: all of them), are want.
func wantBroken(t *testing.T, h *History, only, want []string) {
	t.Helper()
	var got []string
	for _, v := range Check(h) {
		if (only == nil || slices.Contains(only, v.Guarantee)) && !slices.Contains(got, v.Guarantee) {
			got = append(got, v.Guarantee)
		}
		t.Log(v)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("broken guarantees = %q, want %q", got, want)
	}
}

func TestGuaranteesQuoteTheDocs(t *testing.T) {
	for _, g := range guarantees {
		if !strings.Contains(g.doc, ".md") || !strings.Contains(g.doc, `"`) {
			t.Errorf("%q: doc %q names no docs page or quotes nothing", g.name, g.doc)
		}
	}
}

// The same seed makes the same operations in the same order.
func TestGeneratorIsSeeded(t *testing.T) {
	all := Faults{Restarts: true, APIServer: true, Edits: true, Shards: true}
	a, b, c := NewGenerator(7, all), NewGenerator(7, all), NewGenerator(8, all)
	same, kinds := true, map[Kind]bool{}
	for range 2000 {
		x, y, z := a.Next(), b.Next(), c.Next()
		if x != y {
			t.Fatalf("seed 7 gave %v and %v", x, y)
		}
		same = same && x == z
		kinds[x.Kind] = true
	}
	if same {
		t.Error("seeds 7 and 8 gave the same operations")
	}
	for _, k := range []Kind{Create, SetData, SetLabel, Annotate, SetReady, SetState, Delete, Wait, Edit, BadEdit, Term, Kill, StartRep, APIDown} {
		if !kinds[k] {
			t.Errorf("2000 operations hold no %s", k)
		}
	}
}

// The seeded mix moves ConfigMaps into and out of p-sel's selector, and
// edits p-sel2 (which switches the shared informer's selector) amid the
// writes, not only among the rare faults.
func TestGeneratorMovesAcrossSelectors(t *testing.T) {
	g := NewGenerator(7, Faults{Restarts: true, APIServer: true, Edits: true})
	in, out, edits := 0, 0, 0
	for range 2000 {
		switch op := g.Next(); {
		case op.Kind == SetLabel && op.Resource == "configmaps" && slices.Contains(selectorOf("p-sel", 0), op.Value):
			in++
		case op.Kind == SetLabel && op.Resource == "configmaps":
			out++
		case op.Kind == Edit && op.Rule == "p-sel2":
			edits++
		}
	}
	// Expected: about 150, 150 and 80.
	if in < 75 || out < 75 || edits < 40 {
		t.Errorf("2000 operations: %d label writes into p-sel's selector, %d out of it, %d edits of p-sel2; want at least 75, 75, 40", in, out, edits)
	}
}

// Each selector probe's selector is a valid label selector, and p-sel2's
// revisions alternate between p-sel's selector and another.
func TestSelectorProbes(t *testing.T) {
	if !slices.Equal(selectorOf("p-sel2", 0), selectorOf("p-sel", 0)) || slices.Equal(selectorOf("p-sel2", 1), selectorOf("p-sel", 0)) ||
		!slices.Equal(selectorOf("p-sel2", 2), selectorOf("p-sel", 0)) {
		t.Errorf("p-sel2's selectors %v, %v, %v: want p-sel's (%v), another, p-sel's", selectorOf("p-sel2", 0), selectorOf("p-sel2", 1), selectorOf("p-sel2", 2), selectorOf("p-sel", 0))
	}
	ns := namespacesOf("chaos-1-1")
	for _, rev := range []int{0, 1} {
		files := probes(ns, map[string]int{"p-sel2": rev}, "")
		for _, name := range []string{"p-sel", "p-sel2"} {
			rs, err := rules.Parse(name+".yaml", []byte(files[name]))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := "l in (" + strings.Join(selectorOf(name, map[string]int{"p-sel2": rev}[name]), ",") + ")"
			if got := rs[0].Watch[0].LabelSelector; got != want {
				t.Errorf("%s at revision %d: labelSelector %q, want %q", name, rev, got, want)
			}
		}
	}
}

// The probe rules are valid rules, and a broken one does not compile.
func TestProbesParse(t *testing.T) {
	ns := namespacesOf("chaos-1-1")
	for name, body := range probes(ns, map[string]int{}, "p-fin") {
		rs, err := rules.Parse(name+".yaml", []byte(body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		_, err = scripting.Compile(name+".yaml", rs[0].Script, scripting.CompileOptions{})
		if (err != nil) != (name == "p-fin") {
			t.Errorf("%s with p-fin broken: compile error %v", name, err)
		}
	}
}

// A patch whose values the object has already is no write.
func TestHolds(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"ready": false, "n": int64(0)}, "metadata": map[string]any{"labels": map[string]any{"l": "a"}}}
	for _, tt := range []struct {
		p    map[string]any
		want bool
	}{
		{map[string]any{"spec": map[string]any{"ready": false}}, true},
		{map[string]any{"spec": map[string]any{"ready": true}}, false},
		{map[string]any{"spec": map[string]any{"n": "0"}}, true},
		{map[string]any{"metadata": map[string]any{"labels": map[string]any{"l": "b"}}}, false},
		{map[string]any{"metadata": map[string]any{"annotations": map[string]any{"chaos/ignored": "1"}}}, false},
		{map[string]any{"status": map[string]any{"note": "1"}}, false},
	} {
		if got := holds(obj, tt.p); got != tt.want {
			t.Errorf("holds(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

// The guarantees of the label selector probes flag the histories of the
// bugs they look for (a move into or out of a selector lost, delivered as
// the wrong handler, or repeated across a hand-over; an object outside
// the selector delivered) and pass what the docs allow.
func TestSelectorOracle(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Process 0 was killed at 45; process 1 runs from then on.
	base := func() *History {
		return &History{Start: t0, OpsEnd: at(100), End: at(120), Procs: []Proc{{Start: t0, End: at(45), Killed: true}, {Start: at(45)}},
			Faults: []Fault{{Kind: Kill, From: at(45), To: at(46)}}}
	}
	create := func(rv int64, s float64) Write {
		return Write{Kind: Create, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, At: at(s)}
	}
	label := func(l string, rv int64, s float64) Write {
		return Write{Kind: SetLabel, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, Path: "metadata.labels", Value: l, At: at(s)}
	}
	// call is a call of process 1 about u1, with revision 0's selector.
	call := func(rule, handler string, rv int64, l string, s float64) Call {
		c := Call{Proc: 1, Rule: rule, Handler: handler, Name: "a", UID: "u1", RV: rv, L: l, Sel: "a,b", At: at(s)}
		if handler == "onUpdate" {
			c.OldL, c.OldRV, c.Changed = l, rv-2, "metadata.labels.l"
		}
		return c
	}
	final := func(l string) []Object {
		return []Object{{Name: "a", UID: "u1", Labels: map[string]string{"l": l}}}
	}
	// inOut is a ConfigMap created (l=a), moved out (l=c) and back in
	// (l=b), and both probes' calls for it as the docs want them: p-sel's
	// onDelete has the last matching state with the change's
	// resourceVersion, as the API server's selector sends it.
	inOut := func(h *History) {
		h.Writes = []Write{create(10, 50), label("c", 12, 51), label("b", 14, 52)}
		h.Calls = []Call{
			call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onDelete", 12, "a", 51.1), call("p-sel", "onAdd", 14, "b", 52.1),
			call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onDelete", 10, "a", 51.1), call("p-sel2", "onAdd", 14, "b", 52.1),
		}
		h.Final.ConfigMaps = final("b")
	}
	// mergedCreate is a ConfigMap created at 55.1s that both probes first
	// see one state later, with an edit of p-sel2 at editAt.
	mergedCreate := func(editAt float64) func(h *History) {
		return func(h *History) {
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(editAt), To: at(editAt)})
			h.Writes = []Write{create(10, 55.1)}
			h.Calls = []Call{call("p-sel", "onAdd", 11, "a", 55.5), call("p-sel2", "onAdd", 11, "a", 55.5)}
			h.Final.ConfigMaps = final("a")
		}
	}
	tests := []struct {
		name string
		h    func(h *History)
		want []string
	}{
		{"moves into and out of both selectors", inOut, nil},
		{"leaving the selector delivered as an update", func(h *History) {
			inOut(h)
			h.Writes = h.Writes[:2]
			h.Calls[1] = call("p-sel", "onUpdate", 12, "c", 51.1)
			h.Calls[1].OldL = "a"
			h.Calls = slices.Delete(h.Calls, 2, 3)
			h.Calls = slices.Delete(h.Calls, 4, 5)
			h.Final.ConfigMaps = final("c")
		}, []string{"a label selector selects as the API server would", "delivery every sees each move across a selector", "a selector's rule ends holding what it selects"}},
		{"the delete of a move out lost in a hand-over", func(h *History) {
			inOut(h)
			h.Calls[1] = call("p-sel", "onUpdate", 14, "b", 52.1)
			h.Calls = slices.Delete(h.Calls, 2, 3)
		}, []string{"delivery every sees each move across a selector"}},
		{"entering the selector delivered as an update", func(h *History) {
			inOut(h)
			h.Calls[5] = call("p-sel2", "onUpdate", 14, "b", 52.1)
		}, []string{"entering a selector is an add, leaving it a delete", "nothing follows onDelete"}},
		{"an add repeated across a hand-over", func(h *History) {
			inOut(h)
			h.Writes = h.Writes[:1]
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 50.5)}
			h.Calls[2].Initial = true
			h.Final.ConfigMaps = final("a")
		}, []string{"entering a selector is an add, leaving it a delete"}},
		{"a delete of a selected object", func(h *History) {
			h.Writes = []Write{create(10, 50), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(51)}}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onUpdate", 13, "a", 51.1), call("p-sel", "onDelete", 14, "a", 51.5),
				call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onDelete", 14, "a", 51.5)}
		}, nil},
		{"the delete of a selected object lost", func(h *History) {
			h.Writes = []Write{create(10, 50), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(51)}}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onUpdate", 13, "a", 51.1),
				call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onDelete", 14, "a", 51.5)}
		}, []string{"delivery every sees each move across a selector", "a selector's rule ends holding what it selects"}},
		{"an object created during a hand-over is no initial add", func(h *History) {
			// p-sel2's edit restarts the informer under p-sel: no
			// restart of p-sel's.
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{{Kind: Create, Resource: "configmaps", Name: "b", UID: "u0", RV: 8, At: at(50)}, create(10, 55.1)}
			h.Calls = []Call{call("p-sel", "onAdd", 8, "a", 50.1), call("p-sel", "onAdd", 10, "a", 55.5), call("p-sel2", "onAdd", 8, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 55.5)}
			h.Calls[0].UID, h.Calls[2].UID, h.Calls[0].Name, h.Calls[2].Name = "u0", "u0", "b", "b"
			h.Calls[1].Initial = true
			h.Final.ConfigMaps = []Object{{Name: "a", UID: "u1", Labels: map[string]string{"l": "a"}}, {Name: "b", UID: "u0", Labels: map[string]string{"l": "a"}}}
		}, []string{"ctx.initial only for what was there when the rule started"}},
		// Created during the switch, then changed by kreact (a finalizer)
		// before the new informer listed: p-sel sees the difference, as
		// rules.md says, but only when an edit of p-sel2 restarted the
		// informer.
		{"a state merged while an edit of p-sel2 restarts the informer", mergedCreate(55), nil},
		{"a state merged with no restart of the informer", mergedCreate(50), []string{"delivery every sees each move across a selector"}},
		{"an object created before a restart is an initial add", func(h *History) {
			h.Writes = []Write{create(10, 44)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 46.5), call("p-sel2", "onAdd", 10, "a", 46.5)}
			h.Calls[0].Initial, h.Calls[1].Initial = true, true
			h.Final.ConfigMaps = final("a")
		}, nil},
		{"an add repeated across an API server restart", func(h *History) {
			h.Faults = append(h.Faults, Fault{Kind: APIDown, From: at(60), To: at(62)})
			h.Writes = []Write{create(10, 50)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 62.5)}
			h.Calls[2].Initial = true
			h.Final.ConfigMaps = final("a")
		}, nil},
		{"a delete of an object the rule never saw", func(h *History) {
			// Moved out before p-sel2's call: coalesced to nothing.
			h.Writes = []Write{create(10, 50), label("c", 12, 50.05)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onDelete", 12, "a", 50.2), call("p-sel2", "onDelete", 10, "a", 50.2)}
			h.Final.ConfigMaps = final("c")
		}, []string{"entering a selector is an add, leaving it a delete"}},
		{"an object that left while kreact was down is not replayed", func(h *History) {
			h.Writes = []Write{create(10, 40), label("c", 12, 45.5)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 40.1), call("p-sel2", "onAdd", 10, "a", 40.1)}
			h.Calls[0].Proc, h.Calls[1].Proc = 0, 0
			h.Final.ConfigMaps = final("c")
		}, nil},
		{"an object outside the selector delivered after a restart", func(h *History) {
			h.Writes = []Write{create(10, 40), label("c", 12, 45.5)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 40.1), call("p-sel2", "onAdd", 10, "a", 40.1), call("p-sel2", "onAdd", 12, "c", 46)}
			h.Calls[0].Proc, h.Calls[1].Proc, h.Calls[2].Initial = 0, 0, true
			h.Final.ConfigMaps = final("c")
		}, []string{"a label selector selects as the API server would", "a selector's rule ends holding what it selects"}},
		{"a label the object did not have", func(h *History) {
			inOut(h)
			h.Calls[2].L = "a"
		}, []string{"a label selector selects as the API server would"}},
		{"a move out lost across an API server restart", func(h *History) {
			h.Faults = append(h.Faults, Fault{Kind: APIDown, From: at(60), To: at(62)})
			h.Writes = []Write{create(10, 50), label("c", 12, 61)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onDelete", 10, "a", 62.5)}
			h.Final.ConfigMaps = final("c")
		}, []string{"a selector's rule ends holding what it selects"}},
		{"a move in lost across an API server restart", func(h *History) {
			h.Faults = append(h.Faults, Fault{Kind: APIDown, From: at(60), To: at(62)})
			h.Writes = []Write{create(10, 50), label("c", 12, 51), label("b", 14, 61)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onDelete", 12, "a", 51.1),
				call("p-sel2", "onAdd", 10, "a", 50.1), call("p-sel2", "onDelete", 10, "a", 51.1), call("p-sel2", "onAdd", 14, "b", 62.5)}
			h.Final.ConfigMaps = final("b")
		}, []string{"a selector's rule ends holding what it selects"}},
		{"p-sel2's last edit chose its selector", func(h *History) {
			// Revision 1 selects b and c; revision 0's calls no longer count.
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{create(10, 50), label("c", 12, 56)}
			sel2 := call("p-sel2", "onAdd", 12, "c", 55.5)
			sel2.Rev, sel2.Sel, sel2.Initial = 1, "b,c", true
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onDelete", 12, "a", 56.1), call("p-sel2", "onAdd", 10, "a", 50.1), sel2}
			h.Final.ConfigMaps = final("c")
		}, nil},
		{"p-sel2's running revision lost a move in", func(h *History) {
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{create(10, 50), label("c", 12, 56)}
			h.Calls = []Call{call("p-sel", "onAdd", 10, "a", 50.1), call("p-sel", "onDelete", 12, "a", 56.1), call("p-sel2", "onAdd", 10, "a", 50.1)}
			h.Final.ConfigMaps = final("c")
		}, []string{"a selector's rule ends holding what it selects"}},
	}
	// The guarantees a selector probe's calls meet: the four of its own,
	// and two that treat its calls apart.
	checked := []string{"a label selector selects as the API server would", "entering a selector is an add, leaving it a delete",
		"delivery every sees each move across a selector", "a selector's rule ends holding what it selects",
		"nothing follows onDelete", "onUpdate only for a change the rule sees", "ctx.initial only for what was there when the rule started"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base()
			tt.h(h)
			wantBroken(t, h, checked, tt.want)
		})
	}
}

// The guarantees where a finalizer meets a label selector (p-sel2's)
// flag the histories of the bugs they look for (a delete p-sel2 held and
// selected lost, an object stuck in deletion, a finalizer kept on what
// the selector left, an onDelete for what it let go, a rule called for
// its own finalizer patch) and pass what the docs allow (another rule's
// finalizer seen as an update, an object released without onDelete, an
// onDelete replayed at start).
func TestFinalizerSelectorOracle(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Process 0 was killed at 45; process 1 runs from 46 on.
	base := func() *History {
		return &History{Start: t0, OpsEnd: at(100), End: at(120), Procs: []Proc{{Start: t0, End: at(45), Killed: true}, {Start: at(46)}},
			Faults: []Fault{{Kind: Kill, From: at(45), To: at(46)}}}
	}
	const both = "kreact.dev/p-fin,kreact.dev/p-sel2"
	create := func(rv int64, s float64) Write {
		return Write{Kind: Create, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, At: at(s)}
	}
	label := func(l string, rv int64, s float64) Write {
		return Write{Kind: SetLabel, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, Path: "metadata.labels", Value: l, At: at(s)}
	}
	del := func(s float64) Write {
		return Write{Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin", "p-sel2"}, At: at(s)}
	}
	call := func(proc int, rule, handler string, rv int64, l string, s float64) Call {
		c := Call{Proc: proc, Rule: rule, Handler: handler, Name: "a", UID: "u1", RV: rv, L: l, Fin: both, At: at(s)}
		if rule == "p-sel2" {
			c.Sel = "a,b"
		}
		c.Deleting = handler == "onDelete" && rv >= 20
		return c
	}
	live := func(l string, fin ...string) []Object {
		return []Object{{Name: "a", UID: "u1", Labels: map[string]string{"l": l}, Finalizers: fin}}
	}
	// selectedDelete is a ConfigMap (l=a) that both probes hold, deleted
	// at 55: each calls onDelete once, with the deletionTimestamp; p-fin
	// saw p-sel2's finalizer come as an update.
	selectedDelete := func(h *History) {
		h.Writes = []Write{create(10, 50), del(55)}
		finUpdate := call(1, "p-fin", "onUpdate", 11, "a", 50.3)
		finUpdate.OldRV, finUpdate.Fin, finUpdate.OldFin = 10, "kreact.dev/p-sel2", ""
		h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1), finUpdate,
			call(1, "p-fin", "onDelete", 20, "a", 55.1), call(1, "p-sel2", "onDelete", 20, "a", 55.1)}
	}
	// awayStray is a ConfigMap that both probes held, relabelled out of
	// p-sel2's selector (l=c) and deleted while kreact was down: p-fin
	// calls onDelete when it starts, p-sel2 lets it go without one.
	awayStray := func(h *History) {
		h.Writes = []Write{create(10, 40), label("c", 13, 45.3), del(45.5)}
		h.Calls = []Call{call(0, "p-fin", "onAdd", 10, "a", 40.1), call(0, "p-sel2", "onAdd", 10, "a", 40.1), call(1, "p-fin", "onDelete", 20, "c", 46.5)}
	}
	tests := []struct {
		name string
		h    func(h *History)
		want []string
	}{
		{"a selected object's delete reaches both onDelete", selectedDelete, nil},
		{"p-sel2's onDelete of a selected delete lost", func(h *History) {
			selectedDelete(h)
			h.Calls = h.Calls[:4]
		}, []string{"one onDelete per delete"}},
		{"p-sel2's onDelete twice for one delete", func(h *History) {
			selectedDelete(h)
			h.Calls = append(h.Calls, call(1, "p-sel2", "onDelete", 20, "a", 55.3))
		}, []string{"one onDelete per delete"}},
		{"a deleted object stuck on p-sel2's finalizer", func(h *History) {
			selectedDelete(h)
			h.Calls = h.Calls[:4]
			h.Final.ConfigMaps = []Object{{Name: "a", UID: "u1", Terminating: true, Labels: map[string]string{"l": "a"}, Finalizers: []string{"kreact.dev/p-sel2"}}}
		}, []string{"one onDelete per delete", "every deleted object goes"}},
		{"a rule called for its own finalizer patch", func(h *History) {
			selectedDelete(h)
			h.Calls[2].Fin, h.Calls[2].OldFin = "kreact.dev/p-fin", ""
		}, []string{"onUpdate only for a change the rule sees"}},
		{"an object that left the selector while kreact was away goes without onDelete", awayStray, nil},
		{"an object that left the selector while kreact was away gets onDelete", func(h *History) {
			awayStray(h)
			h.Calls = append(h.Calls, call(1, "p-sel2", "onDelete", 20, "c", 46.5))
		}, []string{"a finalizer follows its rule's selector"}},
		{"a deleted object held by the finalizer gets onDelete at start", func(h *History) {
			h.Writes = []Write{create(10, 40), del(45.5)}
			h.Calls = []Call{call(0, "p-fin", "onAdd", 10, "a", 40.1), call(0, "p-sel2", "onAdd", 10, "a", 40.1),
				call(1, "p-fin", "onDelete", 20, "a", 46.5), call(1, "p-sel2", "onDelete", 20, "a", 46.5)}
		}, nil},
		{"an onDelete at start of a deleted object the rule did not hold", func(h *History) {
			h.Writes = []Write{create(10, 40), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: []string{"p-fin"}, At: at(45.5)}}
			h.Calls = []Call{call(0, "p-fin", "onAdd", 10, "a", 40.1), call(1, "p-fin", "onDelete", 20, "a", 46.5), call(1, "p-sel2", "onDelete", 20, "a", 46.5)}
			h.Calls[2].Fin = "kreact.dev/p-fin"
		}, []string{"entering a selector is an add, leaving it a delete"}},
		{"a move out of the selector while the rule runs releases the finalizer", func(h *History) {
			h.Writes = []Write{create(10, 50), label("c", 13, 52)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onDelete", 13, "a", 52.1)}
			h.Final.ConfigMaps = live("c", "kreact.dev/p-fin")
		}, nil},
		{"a move out of the selector keeps the finalizer", func(h *History) {
			h.Writes = []Write{create(10, 50), label("c", 13, 52)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onDelete", 13, "a", 52.1)}
			h.Final.ConfigMaps = live("c", "kreact.dev/p-fin", "kreact.dev/p-sel2")
		}, []string{"a finalizer follows its rule's selector"}},
		{"an edit that no longer selects the object releases it", func(h *History) {
			// Revision 1 selects b and c.
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{create(10, 50)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1)}
			h.Final.ConfigMaps = live("a", "kreact.dev/p-fin")
		}, nil},
		{"an edit that no longer selects the object keeps the finalizer", func(h *History) {
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{create(10, 50)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1)}
			h.Final.ConfigMaps = live("a", "kreact.dev/p-fin", "kreact.dev/p-sel2")
		}, []string{"a finalizer follows its rule's selector"}},
		{"a selected object without the finalizer", func(h *History) {
			h.Writes = []Write{create(10, 50)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1)}
			h.Final.ConfigMaps = live("a", "kreact.dev/p-fin")
		}, []string{"a finalizer follows its rule's selector"}},
		{"a delete whose object an edit took out of the selector owes no onDelete", func(h *History) {
			h.Ops = []Op{{Kind: Edit, Rule: "p-sel2"}}
			h.Faults = append(h.Faults, Fault{Kind: Edit, Rule: "p-sel2", From: at(55), To: at(55)})
			h.Writes = []Write{create(10, 50), del(55.1)}
			h.Calls = []Call{call(1, "p-fin", "onAdd", 10, "a", 50.1), call(1, "p-sel2", "onAdd", 10, "a", 50.1), call(1, "p-fin", "onDelete", 20, "a", 55.2)}
		}, nil},
	}
	checked := []string{"one onDelete per delete", "every deleted object goes", "a finalizer follows its rule's selector",
		"onUpdate only for a change the rule sees", "entering a selector is an add, leaving it a delete"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base()
			tt.h(h)
			wantBroken(t, h, checked, tt.want)
		})
	}
}
