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
		return &History{Start: t0, OpsEnd: at(100), End: at(120), Procs: []Proc{{Start: t0}, {Start: at(50)}}}
	}
	cm := func(kind Kind, rv int64, path string, s float64) Write {
		return Write{Kind: kind, Resource: "configmaps", Name: "a", UID: "u1", RV: rv, Path: path, At: at(s)}
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
			h.Final.ConfigMaps = []Object{{Name: "a", UID: "u1", Annotations: map[string]string{"once.kreact.dev/p-fin": ""}, Data: map[string]string{"v": "1"}}}
			h.Final.Copies = []Object{{Name: "copy-a", Data: map[string]string{"v": "1"}}}
		}, nil},
		{"bug 1: the once marker calls onUpdate", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1)}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, Once: true, At: at(1.1)},
				{Rule: "p-fin", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 11, Changed: "metadata.annotations", At: at(1.2)},
			}
		}, []string{"onUpdate only for a change the rule sees"}},
		{"bug 3: two onDelete for one delete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: true, At: at(5)}}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.2)},
			}
		}, []string{"one onDelete per delete"}},
		{"two onDelete across a kill are allowed", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: true, At: at(5)}}
			h.Faults = []Fault{{Kind: Kill, From: at(5.15), To: at(6)}}
			h.Calls = []Call{
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Proc: 0, Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Proc: 1, Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(6.5)},
			}
		}, nil},
		{"a held delete never called", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: true, At: at(5)}}
			h.Calls = []Call{{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}, {Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}}
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
		}, []string{"every change reaches the rule", "delivery every calls once per change"}},
		{"an annotation p-fin ignores reaches p-every only", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(Annotate, 12, "metadata.annotations", 2)}
			h.Calls = []Call{{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)}, {Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: `metadata.annotations["chaos/ignored"]`, At: at(2.1)}}
		}, nil},
		{"a projected rule called for a path it does not keep", func(h *History) {
			h.Calls = []Call{{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 12, Changed: "metadata.generation", At: at(2.1)}}
		}, []string{"onUpdate only for a change the rule sees"}},
		{"a change of an object being deleted may come after its onDelete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: true, At: at(5)}, cm(SetData, 14, "data", 5.2)}
			h.Calls = []Call{
				{Rule: "p-every", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onAdd", UID: "u1", RV: 10, At: at(1.1)},
				{Rule: "p-fin", Handler: "onDelete", UID: "u1", RV: 13, At: at(5.1)},
				{Rule: "p-every", Handler: "onUpdate", UID: "u1", OldRV: 10, RV: 14, Changed: "data.v", At: at(5.3)},
				{Rule: "p-every", Handler: "onDelete", UID: "u1", RV: 14, At: at(5.4)},
			}
		}, nil},
		{"a change before a held delete must reach onDelete", func(h *History) {
			h.Writes = []Write{cm(Create, 10, "", 1), cm(SetData, 12, "data", 4), {Kind: Delete, Resource: "configmaps", Name: "a", UID: "u1", Held: true, At: at(5)}}
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
			var got []string
			for _, v := range Check(h) {
				if !slices.Contains(got, v.Guarantee) {
					got = append(got, v.Guarantee)
				}
				t.Log(v)
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("broken guarantees = %q, want %q", got, want)
			}
		})
	}
}

// Every guarantee names the docs that make it, so that a reader can
// compare the oracle with them.
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
