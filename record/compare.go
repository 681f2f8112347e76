package record

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/linediff"
)

// Target names the object an action is aimed at: its resource (group and
// resource, as kubectl names them), namespace and name. An HTTP request's
// target is its URL, under resource "http".
type Target struct {
	Resource, Namespace, Name string
}

func (t Target) String() string {
	switch {
	case t.Namespace != "":
		return t.Resource + " " + t.Namespace + "/" + t.Name
	default:
		return t.Resource + " " + t.Name
	}
}

func targetOf(a actions.Action) Target {
	if a.Verb == actions.HTTP {
		url := ""
		if a.Request != nil {
			url = a.Request.URL
		}
		return Target{Resource: "http", Name: url}
	}
	name := a.Name
	if name == "" {
		// A create with metadata.generateName.
		prefix, _, _ := unstructured.NestedString(a.Object, "metadata", "generateName")
		name = prefix + "*"
	}
	return Target{Resource: a.Resource.GroupResource().String(), Namespace: a.Namespace, Name: name}
}

// ObjectActions are the actions a plan takes on one object, in the
// order asked.
type ObjectActions struct {
	Target  Target
	Actions []Planned
}

// ByObject returns p's actions grouped by their target, the targets
// sorted by resource, namespace and name. The actions on one object keep
// the order they were asked in, the order kreact run sends them in.
func (p Plan) ByObject() []ObjectActions {
	var out []ObjectActions
	index := map[Target]int{}
	for _, pl := range p.Actions {
		t := targetOf(pl.Action)
		i, ok := index[t]
		if !ok {
			i = len(out)
			index[t] = i
			out = append(out, ObjectActions{Target: t})
		}
		out[i].Actions = append(out[i].Actions, pl)
	}
	slices.SortFunc(out, func(a, b ObjectActions) int { return compareTargets(a.Target, b.Target) })
	return out
}

func compareTargets(a, b Target) int {
	return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// Difference is how the actions on one object differ between two plans:
// Removed are those only the first plan takes, Added those only the
// second takes; the actions both take, in the same order, are in
// neither.
type Difference struct {
	Target         Target
	Removed, Added []Planned
}

// Comparison is how a rule set's plan differs from another's on the same
// objects (kreact preview --against): by object, and in the errors of
// their calls.
type Comparison struct {
	// Old and New are the plans compared.
	Old, New Plan
	// Objects are the objects whose actions differ, sorted as ByObject
	// sorts them.
	Objects []Difference
	// ErrorsGone are the errors only Old's calls made; ErrorsNew those
	// only New's make.
	ErrorsGone, ErrorsNew []string
}

// Same reports whether both plans take the same actions and make the
// same errors.
func (c Comparison) Same() bool {
	return len(c.Objects) == 0 && len(c.ErrorsGone) == 0 && len(c.ErrorsNew) == 0
}

// Compare returns how new's actions differ from old's, object by object.
// Two actions are the same when they ask the same (ruletest.ActionFields,
// with the rule's name; not where in the script they were asked); on one
// object, the actions both take are their longest common sequence, so
// that an action moved before another is one removed and one added.
func Compare(old, new Plan) Comparison {
	c := Comparison{Old: old, New: new}
	oldBy, newBy := map[Target][]Planned{}, map[Target][]Planned{}
	var targets []Target
	for _, o := range old.ByObject() {
		oldBy[o.Target] = o.Actions
		targets = append(targets, o.Target)
	}
	for _, o := range new.ByObject() {
		newBy[o.Target] = o.Actions
		if _, ok := oldBy[o.Target]; !ok {
			targets = append(targets, o.Target)
		}
	}
	slices.SortFunc(targets, compareTargets)
	for _, t := range targets {
		a, b := oldBy[t], newBy[t]
		keys := func(ps []Planned) []string {
			out := make([]string, len(ps))
			for i, p := range ps {
				out[i] = actionKey(p.Action)
			}
			return out
		}
		d := Difference{Target: t}
		for _, e := range linediff.Edits(keys(a), keys(b)) {
			switch e.Op {
			case linediff.Remove:
				d.Removed = append(d.Removed, a[e.A])
			case linediff.Add:
				d.Added = append(d.Added, b[e.B])
			}
		}
		if len(d.Removed) > 0 || len(d.Added) > 0 {
			c.Objects = append(c.Objects, d)
		}
	}
	for _, e := range old.Errors {
		if !slices.Contains(new.Errors, e) {
			c.ErrorsGone = append(c.ErrorsGone, e)
		}
	}
	for _, e := range new.Errors {
		if !slices.Contains(old.Errors, e) {
			c.ErrorsNew = append(c.ErrorsNew, e)
		}
	}
	return c
}
