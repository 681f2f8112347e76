package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
