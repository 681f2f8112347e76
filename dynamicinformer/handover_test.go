package dynamicinformer

import (
	"cmp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// cached returns a ConfigMap as a cache holds it.
func cached(name, uid, rv string, lbls map[string]string) *compactObject {
	u := newObj("v1", "ConfigMap", "ns", name, lbls)
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	return compact(u)
}

// TestHandoverOfASelectorRestart: an informer that selected app=x on the
// server restarts without a selector. What the handler was given by the
// first instance is handed over: the new initial list sends nothing for
// an object at the state it was given, an update for one that changed,
// and at release the deletes it missed (an object deleted, or relabelled
// out of its selector, meanwhile), but none for an object whose name a
// new incarnation that it selects holds. An object it was not given is an
// add, initial only if the handler had not received the first instance's
// whole initial list (it was not resumed): else it was created, or came
// to match, while the informers were switched. A sharded handover sends
// no deletes.
func TestHandoverOfASelectorRestart(t *testing.T) {
	x := map[string]string{"app": "x"}
	sel, err := labels.Parse("app=x")
	if err != nil {
		t.Fatal(err)
	}
	given := []*compactObject{
		cached("same", "u1", "1", x),
		cached("changed", "u2", "2", x),
		cached("deleted", "u3", "3", x),
		cached("relabelled", "u4", "4", x),
		cached("recreated", "u5", "5", x),
		cached("back", "u6", "6", x),
	}
	// What the new instance's cache holds at release.
	now := map[string]*compactObject{
		"same":       given[0],
		"changed":    cached("changed", "u2", "12", x),
		"relabelled": cached("relabelled", "u4", "14", map[string]string{"app": "y"}),
		"recreated":  cached("recreated", "u7", "15", x),
		"back":       cached("back", "u6", "16", x),
	}
	current := func(namespace, name string) (any, bool) {
		o, ok := now[name]
		return o, ok
	}
	for _, tc := range []struct {
		name             string
		deletes, resumed bool
		want             []event
	}{
		{"not sharded", true, true, []event{
			{Type: "update", Namespace: "ns", Name: "changed", RV: "12"},
			{Type: "add", Namespace: "ns", Name: "recreated", RV: "15"},
			{Type: "delete", Namespace: "ns", Name: "back", RV: "6"},
			{Type: "add", Namespace: "ns", Name: "back", RV: "16"},
			{Type: "delete", Namespace: "ns", Name: "deleted", RV: "3"},
			{Type: "delete", Namespace: "ns", Name: "relabelled", RV: "4"},
		}},
		{"not sharded, before its initial list was whole", true, false, []event{
			{Type: "update", Namespace: "ns", Name: "changed", RV: "12"},
			{Type: "add", Namespace: "ns", Name: "recreated", Initial: true, RV: "15"},
			{Type: "delete", Namespace: "ns", Name: "back", RV: "6"},
			{Type: "add", Namespace: "ns", Name: "back", RV: "16"},
			{Type: "delete", Namespace: "ns", Name: "deleted", RV: "3"},
			{Type: "delete", Namespace: "ns", Name: "relabelled", RV: "4"},
		}},
		{"sharded", false, false, []event{
			{Type: "update", Namespace: "ns", Name: "changed", RV: "12"},
			{Type: "add", Namespace: "ns", Name: "recreated", Initial: true, RV: "15"},
			{Type: "add", Namespace: "ns", Name: "back", RV: "16"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			first := newHandover(newExpander(rec), nil, true, tc.deletes, false)
			for _, o := range given {
				first.OnAdd(o, true)
			}
			rec.events = nil
			ho := newHandover(newExpander(rec), first, false, tc.deletes, tc.resumed)
			if !ho.handingOver() || ho.recording() {
				t.Fatalf("handingOver %v, recording %v; want true, false", ho.handingOver(), ho.recording())
			}
			// The new initial list as the handler's selector lets it
			// through: relabelled does not match, back was not listed.
			for _, name := range []string{"same", "changed", "recreated"} {
				ho.OnAdd(now[name], true)
			}
			ho.OnAdd(now["back"], false) // relabelled out and back in meanwhile
			ho.release(current, sel)
			got := rec.snapshot()
			if tc.deletes && len(got) >= 2 {
				// The leftovers' deletes come last, in map order.
				tail := got[len(got)-2:]
				slices.SortFunc(tail, func(a, b event) int { return cmp.Compare(a.Name, b.Name) })
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %+v\nwant\n  %+v", got, tc.want)
			}
			if ho.handingOver() {
				t.Error("still handing over after release")
			}
		})
	}
}

// TestHandoverClosed: once its Watch has stopped, release calls the
// handler no more.
func TestHandoverClosed(t *testing.T) {
	rec := &recorder{}
	first := newHandover(newExpander(rec), nil, true, true, false)
	first.OnAdd(cached("gone", "u1", "1", nil), true)
	ho := newHandover(newExpander(rec), first, false, true, true)
	ho.close()
	ho.release(func(string, string) (any, bool) { return nil, false }, labels.Everything())
	if got := rec.snapshot(); len(got) != 1 {
		t.Errorf("got %+v, want only the first add", got)
	}
}

// TestRegisteredHandlerCarriesRecordsOnlyAcrossSelectorRestarts: a Watch
// that is not sharded hands its record over to the next instance after a
// restart for another selector or more fields (carry), not after others
// (the resource gone and back), whose initial list is handed out whole;
// a sharded one always does.
func TestRegisteredHandlerCarriesRecordsOnlyAcrossSelectorRestarts(t *testing.T) {
	narrowed, unselected := &instance{labelSelector: "app=x"}, &instance{}
	for _, tc := range []struct {
		name           string
		sharded, carry bool
		next           *instance
		handingOver    bool
		recording      bool
	}{
		{"selector restart", false, true, unselected, true, false},
		{"wider fields, still narrowed", false, true, narrowed, true, true},
		{"resource back", false, false, narrowed, false, true},
		{"resource back, unselected", false, false, unselected, false, false},
		{"sharded", true, false, unselected, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, _ := labels.Parse("app=x")
			w := &Watch{handler: &recorder{}, sel: sel}
			w.registeredHandler(narrowed, tc.sharded, false)
			if w.ho == nil || !w.ho.recording() {
				t.Fatal("no record kept on a narrowed instance")
			}
			w.ho.OnAdd(cached("a", "u1", "1", map[string]string{"app": "x"}), true)
			w.registeredHandler(tc.next, tc.sharded, tc.carry)
			var handing, recording bool
			if w.ho != nil {
				handing, recording = w.ho.handingOver(), w.ho.recording()
			}
			if handing != tc.handingOver || recording != tc.recording {
				t.Errorf("handingOver %v, recording %v; want %v, %v", handing, recording, tc.handingOver, tc.recording)
			}
		})
	}
}
