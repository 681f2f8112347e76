package rules

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
)

// TestLongListsCheckInLinearTime: validation used to compare every entry of
// a list with every entry before it (40,000 spec.http prefixes took 4.7 s,
// 20,000 took 0.83 s). With 100,000 entries in each list, a quadratic check
// takes minutes; the bound only catches that, not a slow machine.
func TestLongListsCheckInLinearTime(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	b.WriteString("apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch:\n  - resource: configmaps\n    namespaces:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - ns-%d\n", i)
	}
	b.WriteString("  ignoreChanges:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - metadata.annotations.a%d\n", i)
	}
	b.WriteString("  permissions:\n  - resources: [configmaps]\n    verbs: [patch]\n    namespaces:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - ns-%d\n", n-1-i)
	}
	b.WriteString("  - resources: [configmaps]\n    verbs: [patch]\n    namespaces:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - other-%d\n", i)
	}
	b.WriteString("  http:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - http://127.0.0.1:9999/hooks/%d/\n", i)
	}
	b.WriteString("  script: x\n")
	src := b.String()

	done := make(chan error, 1)
	var r *Rule
	var res *Resolved
	go func() {
		rs, err := Parse("long.yaml", []byte(src))
		if err != nil {
			done <- err
			return
		}
		r = rs[0]
		res, err = r.Resolve(&fakeResolver{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%.2000v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("checking long lists hangs: a quadratic loop is back")
	}
	if len(r.HTTP) != n || len(r.IgnoreChanges) != n || len(r.Watch[0].Namespaces) != n {
		t.Errorf("got %d http prefixes, %d ignored paths, %d namespaces; want %d each", len(r.HTTP), len(r.IgnoreChanges), len(r.Watch[0].Namespaces), n)
	}
	// IgnoredPaths, which the engine calls for every rule, used to scan
	// the paths before each one.
	if got := len(r.IgnoredPaths()); got != n+2 {
		t.Errorf("IgnoredPaths has %d paths, want %d", got, n+2)
	}
	if g := res.Permissions[res.Watch[0].Resource.GVR.GroupResource()]; len(g) != 1 || len(g[0].Namespaces) != 2*n {
		t.Errorf("merged grant has %d namespaces, want %d", len(g[0].Namespaces), 2*n)
	}
}

// TestDuplicatesStillFound: the map that finds duplicates reports the same
// errors as the scan did.
func TestDuplicatesStillFound(t *testing.T) {
	_, err := Parse("d.yaml", []byte("apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch: [{resource: pods}]\n"+
		"  http: [http://h/a/, http://h/b/, http://h/a/]\n  ignoreChanges: [metadata.labels.x, 'metadata.labels[\"x\"]']\n  script: x\n"))
	for _, want := range []string{`d.yaml:6:36: spec.http[2]: duplicate "http://h/a/" (first at 6:10)`, `spec.ignoreChanges[1]: "metadata.labels[\"x\"]" is the same path as "metadata.labels.x"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse = %v, want %s", err, want)
		}
	}
}

// TestWatchOverlapLinear: the check that no two spec.watch entries see the
// same objects compared every entry with every entry before it. 100,000
// entries, each in a namespace of its own, took minutes; the last one,
// which shares a namespace with the first, must still be found. The rule
// is built directly: parsing 100,000 entries would cost more than the
// check.
func TestWatchOverlapLinear(t *testing.T) {
	const n = 100_000
	r := &Rule{Name: "r"}
	for i := range n + 1 {
		w := Watch{Resource: "configmaps", Namespaces: []string{fmt.Sprint("ns-", i), fmt.Sprint("x-", i)}, Pos: diag.Position{File: "w.yaml", Line: i + 1, Col: 5}}
		if i == n {
			w.Resource, w.Namespaces = "cm", []string{"y", "ns-0"}
		}
		r.Watch = append(r.Watch, w)
	}
	_, err := r.Resolve(&fakeResolver{})
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("Resolve = %.2000v, want one error", err)
	}
	want := fmt.Sprintf("w.yaml:%d:5: spec.watch[%d]: watches the same objects as spec.watch[0] (at 1:5); each change would be handled twice", n+1, n)
	if got := list[0].Error(); got != want {
		t.Errorf("error = %s\nwant    %s", got, want)
	}
}

// TestWatchOverlapSameAsPairwise: the index finds, for every entry, the
// same earlier entry as comparing it with each earlier entry in turn.
func TestWatchOverlapSameAsPairwise(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	grs := []schema.GroupResource{{Resource: "configmaps"}, {Group: "apps", Resource: "deployments"}}
	selectors := []string{"", "a=b", " a=b "}
	for round := range 200 {
		var (
			watches []Watch
			res     []schema.GroupResource
			x       = newWatchIndex()
		)
		for i := range 1 + rnd.IntN(30) {
			w := Watch{LabelSelector: selectors[rnd.IntN(3)], FieldSelector: selectors[rnd.IntN(2)]}
			for ns := range 4 {
				if rnd.IntN(3) == 0 {
					w.Namespaces = append(w.Namespaces, fmt.Sprint("ns", ns))
				}
			}
			gr := grs[rnd.IntN(2)]
			want := -1
			for j := range watches {
				if overlapsPairwise(watches[j], res[j], w, gr) {
					want = j
					break
				}
			}
			if got := x.add(i, w, gr); got != want {
				t.Fatalf("round %d, entry %d %+v: overlaps %d, want %d (earlier: %+v)", round, i, w, got, want, watches)
			}
			watches, res = append(watches, w), append(res, gr)
		}
	}
}

// overlapsPairwise is the definition the index implements: the check as it
// was, one pair at a time.
func overlapsPairwise(prev Watch, prevGR schema.GroupResource, w Watch, gr schema.GroupResource) bool {
	if prevGR != gr ||
		strings.TrimSpace(prev.LabelSelector) != strings.TrimSpace(w.LabelSelector) ||
		strings.TrimSpace(prev.FieldSelector) != strings.TrimSpace(w.FieldSelector) {
		return false
	}
	if len(prev.Namespaces) == 0 || len(w.Namespaces) == 0 {
		return true
	}
	for _, ns := range w.Namespaces {
		if slices.Contains(prev.Namespaces, ns) {
			return true
		}
	}
	return false
}

// TestManyPermissionEntriesMergeLinear: each spec.permissions entry used to
// be merged into the sorted namespaces of the entries before it, sorting
// them again each time. 50,000 entries on one resource, one namespace
// each, merge into one grant with every namespace, sorted. The rule is
// built directly, as in TestWatchOverlapLinear.
func TestManyPermissionEntriesMergeLinear(t *testing.T) {
	const n = 50_000
	r := &Rule{Name: "r", Watch: []Watch{{Resource: "configmaps", Pos: diag.Position{File: "p.yaml", Line: 1, Col: 1}}}}
	for i := range n {
		pos := diag.Position{File: "p.yaml", Line: i + 2, Col: 5}
		r.Permissions = append(r.Permissions, Permission{
			Resources:  []Ref{{Name: "configmaps", Pos: pos}, {Name: "cm", Pos: pos}},
			Verbs:      []actions.Verb{actions.Patch, actions.Delete},
			Namespaces: []string{fmt.Sprint("ns-", n-1-i)},
			Pos:        pos,
		})
	}
	r.Permissions = append(r.Permissions, Permission{Resources: []Ref{{Name: "configmaps"}}, Verbs: []actions.Verb{actions.Delete}, AllNamespaces: true})
	res, err := r.Resolve(&fakeResolver{})
	if err != nil {
		t.Fatalf("%.2000v", err)
	}
	g := res.Permissions[schema.GroupResource{Resource: "configmaps"}]
	if len(g) != 2 || g[0].Verb != "patch" || g[1].Verb != "delete" {
		t.Fatalf("grants = %.200v, want patch and delete", g)
	}
	if len(g[0].Namespaces) != n || !slices.IsSorted(g[0].Namespaces) || g[0].Namespaces[0] != "ns-0" {
		t.Errorf("patch applies in %d namespaces (sorted: %v), want %d", len(g[0].Namespaces), slices.IsSorted(g[0].Namespaces), n)
	}
	if g[1].Namespaces != nil {
		t.Errorf("delete applies in %d namespaces, want all (nil)", len(g[1].Namespaces))
	}
	if err := res.Allows("patch", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns-4242"); err != nil {
		t.Error(err)
	}
	if err := res.Allows("patch", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns-x"); err == nil {
		t.Error("patch in ns-x allowed")
	}
}

// TestSyntaxLineWorkIsBounded: the search for the line of a YAML error
// parses ever shorter prefixes of the document; past maxSyntaxWork bytes
// of them it gives up (a 16 MiB file with an unclosed bracket near its top
// took minutes) and the line yaml.v3 reports stands.
func TestSyntaxLineWorkIsBounded(t *testing.T) {
	small := []string{"a:", "  b: [", "  c: 1"}
	if line, ok := syntaxLine(small, document{1, 3}); !ok || line != 2 {
		t.Errorf("syntaxLine(small) = %d, %v; want 2, true", line, ok)
	}
	long := strings.Repeat("x", maxSyntaxWork/100+1) + ","
	big := []string{"a:", "  b: ["}
	for range 100 {
		big = append(big, "  "+long)
	}
	big = append(big, "c: d: e")
	if line, ok := syntaxLine(big, document{1, len(big)}); ok {
		t.Errorf("syntaxLine over %d bytes = %d, true; want it to give up", maxSyntaxWork, line)
	}
	_, err := Parse("big.yaml", []byte(strings.Join(big, "\n")))
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !list[0].Pos.IsValid() {
		t.Errorf("Parse = %.300v, want one positioned error", err)
	}
}
