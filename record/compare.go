package record

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
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
		for _, e := range diffLines(keys(a), keys(b)) {
			switch e.op {
			case '-':
				d.Removed = append(d.Removed, a[e.a])
			case '+':
				d.Added = append(d.Added, b[e.b])
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

// edit is one line of a line diff: op ' ' (in both), '-' (only in the
// first, at index a) or '+' (only in the second, at index b).
type edit struct {
	op   byte
	a, b int
}

// maxDiffCells bounds the table of diffLines (8 bytes a cell): beyond
// it, the lines that differ are not aligned.
const maxDiffCells = 1 << 22

// diffLines returns the edits from a to b along their longest common
// subsequence; the common prefix and suffix, most of an object that an
// action changes, are taken off first, so that the quadratic part covers
// only what changed.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	x, y := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(x)*len(y) > maxDiffCells {
		// Too big a change to align line by line: all of it goes, all
		// of it comes, a diff still, if not the shortest.
		x, y = nil, nil
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []edit
	for i := range pre {
		out = append(out, edit{' ', i, i})
	}
	if x == nil && y == nil {
		for i := pre; i < len(a)-suf; i++ {
			out = append(out, edit{'-', i, -1})
		}
		for j := pre; j < len(b)-suf; j++ {
			out = append(out, edit{'+', -1, j})
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, edit{' ', pre + i, pre + j})
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, edit{'+', -1, pre + j})
			j++
		default:
			out = append(out, edit{'-', pre + i, -1})
			i++
		}
	}
	for k := range suf {
		out = append(out, edit{' ', len(a) - suf + k, len(b) - suf + k})
	}
	return out
}

// unifiedDiff returns the lines that differ between before and after as
// a unified diff (diff -u, without the file header) with context lines
// of context around each change; "" when they are the same.
func unifiedDiff(before, after string, context int) string {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	a, b := split(before), split(after)
	edits := diffLines(a, b)
	// aBefore[k] and bBefore[k] count the lines of a and b before edits[k].
	aBefore, bBefore := make([]int, len(edits)+1), make([]int, len(edits)+1)
	for k, e := range edits {
		aBefore[k+1], bBefore[k+1] = aBefore[k], bBefore[k]
		if e.op != '+' {
			aBefore[k+1]++
		}
		if e.op != '-' {
			bBefore[k+1]++
		}
	}
	var out strings.Builder
	for start := 0; start < len(edits); {
		// The next hunk: from context lines before a change to context
		// lines after the last change that is at most 2*context lines
		// from the one before it.
		first := start
		for first < len(edits) && edits[first].op == ' ' {
			first++
		}
		if first == len(edits) {
			break
		}
		last := first
		for k := first + 1; k < len(edits); k++ {
			if edits[k].op != ' ' {
				if k-last > 2*context {
					break
				}
				last = k
			}
		}
		from, to := max(first-context, start), min(last+context+1, len(edits))
		var lines strings.Builder
		aLen, bLen := 0, 0
		for _, e := range edits[from:to] {
			switch e.op {
			case ' ':
				lines.WriteString(" " + a[e.a] + "\n")
				aLen++
				bLen++
			case '-':
				lines.WriteString("-" + a[e.a] + "\n")
				aLen++
			case '+':
				lines.WriteString("+" + b[e.b] + "\n")
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n%s", hunkRange(aBefore[from], aLen), hunkRange(bBefore[from], bLen), lines.String())
		start = to
	}
	return out.String()
}

// hunkRange is a hunk's range of lines in one file as diff -u writes it:
// "start,length", 1-based, where before lines of the file come before
// the hunk; an empty range names the line it follows ("0,0" at the
// start of the file).
func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}
