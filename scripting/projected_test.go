package scripting

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
)

// TestStrictViewsReportReadsOutsideTheProjection: with Event.Strict, a
// handler sees the cut-down objects as kreact run shows them (undefined
// for what the projection dropped), and every read of a dropped path that
// the whole object has is reported, with the script's position; reads of
// kept paths, and of paths the whole object lacks too, are not.
func TestStrictViewsReportReadsOutsideTheProjection(t *testing.T) {
	src := `function onUpdate(oldObj, newObj, ctx) {
  kreact.log("replicas " + String(newObj.spec.replicas));
  kreact.log("template " + String(newObj.spec.template));
  kreact.log("old status " + String(oldObj.status));
  kreact.log("absent " + String(newObj.spec.absent));
  kreact.log("label " + newObj.metadata.labels.app);
  kreact.log("has paused " + String("paused" in newObj.spec));
  kreact.log("keys " + Object.keys(newObj.spec).join(","));
  kreact.log("clone " + JSON.stringify(kreact.clone(newObj.spec)));
}
`
	fields := projection.New(projection.Path{"spec", "replicas"})
	whole, oldWhole := deployment("default", "web", 3), deployment("default", "web", 2)
	var mu sync.Mutex
	var reads []string
	ev := event.Event{
		Type:      event.Update,
		Object:    &unstructured.Unstructured{Object: fields.Apply(whole.Object)},
		OldObject: &unstructured.Unstructured{Object: fields.Apply(oldWhole.Object)},
		Resource:  deployments,
		Strict: &event.Strict{Fields: fields, Object: whole, OldObject: oldWhole, Where: "spec.watch[0].fields",
			WherePos: diag.Position{File: "r.yaml", Line: 7, Col: 15},
			Report: func(r event.OutsideRead) {
				mu.Lock()
				defer mu.Unlock()
				reads = append(reads, r.String())
			}},
	}
	h := newFakeHost()
	r := mustRuntime(t, "r.js", src, h, RuntimeOptions{})
	if _, err := r.Call(ev); err != nil {
		t.Fatal(err)
	}
	want := []string{
		position("r.js", src, "newObj.spec.template") + ": onUpdate read newObj.spec.template, which spec.watch[0].fields does not keep (r.yaml:7:15)",
		position("r.js", src, "oldObj.status") + ": onUpdate read oldObj.status, which spec.watch[0].fields does not keep (r.yaml:7:15)",
		position("r.js", src, `"paused" in`) + ": onUpdate read newObj.spec.paused, which spec.watch[0].fields does not keep (r.yaml:7:15)",
	}
	// goja reports the position of a member expression at its end or
	// its start; compare lines only.
	lines := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			file, rest, _ := strings.Cut(s, ": ")
			out[i] = file[:strings.LastIndex(file, ":")] + ": " + rest
		}
		return out
	}
	if !slices.Equal(lines(reads), lines(want)) {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(reads, "\n"), strings.Join(want, "\n"))
	}
	wantLogs := []string{
		"replicas 3", "template undefined", "old status undefined", "absent undefined", "label web",
		"has paused false", "keys replicas", `clone {"replicas":3}`,
	}
	if got := h.messages(); !slices.Equal(got, wantLogs) {
		t.Errorf("logs %q, want %q", got, wantLogs)
	}
}

// A read outside the projection is reported where ReadPaths places it
// (the start of the chain: what kreact validate warns about) and named
// with the script's own parameter names, whatever column goja stops at;
// a read ReadPaths does not see ("in") is where goja was.
func TestStrictReadsArePlacedAsReadPaths(t *testing.T) {
	src := `function onUpdate(before, d, ctx) {
  kreact.log("x", {a: String(d.spec.template), b: String(before.status?.phase), c: String("paused" in d.spec)});
}
`
	fields := projection.New(projection.Path{"spec", "replicas"})
	whole, oldWhole := deployment("default", "web", 3), deployment("default", "web", 2)
	oldWhole.Object["status"] = map[string]any{"phase": "x"}
	var mu sync.Mutex
	var reads []event.OutsideRead
	ev := event.Event{
		Type:      event.Update,
		Object:    &unstructured.Unstructured{Object: fields.Apply(whole.Object)},
		OldObject: &unstructured.Unstructured{Object: fields.Apply(oldWhole.Object)},
		Resource:  deployments,
		Strict: &event.Strict{Fields: fields, Object: whole, OldObject: oldWhole, Where: "spec.watch[0].fields",
			Report: func(r event.OutsideRead) {
				mu.Lock()
				defer mu.Unlock()
				reads = append(reads, r)
			}},
	}
	r := mustRuntime(t, "r.js", src, newFakeHost(), RuntimeOptions{})
	if _, err := r.Call(ev); err != nil {
		t.Fatal(err)
	}
	static := map[string]string{}
	for _, rp := range r.cfg.p.ReadPaths() {
		static[ReadName(rp.Param, rp.Path)] = rp.Pos.String()
	}
	var got []string
	for _, rd := range reads {
		got = append(got, rd.Path+"@"+rd.Pos.String())
	}
	want := []string{
		"d.spec.template@" + position("r.js", src, "d.spec.template"),
		"before.status@" + position("r.js", src, "before.status"),
	}
	if len(got) != 3 || !slices.Equal(got[:2], want) || !strings.HasPrefix(got[2], "d.spec.paused@r.js:2:") {
		t.Errorf("reported %q, want %q and d.spec.paused on line 2", got, want)
	}
	for _, w := range want[:1] {
		name, pos, _ := strings.Cut(w, "@")
		if static[name] != pos {
			t.Errorf("ReadPaths places %s at %q, the strict view at %q", name, static[name], pos)
		}
	}
}
