package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The probe rules. Each lives in a file of its own, so that editing one
// restarts that rule only. Every call logs one line "probe" with the
// handler (h), the object's uid and resourceVersion (rv), and what the
// oracle needs besides (oldrv, initial, once, deadline); at is kreact's
// clock in milliseconds, rev the revision of the rule's file, l (and oldl)
// the label l of the object (and of the old one), fin (and oldfin) its
// finalizers, deleting whether it has a deletionTimestamp.
var probeNames = []string{"p-fin", "p-every", "p-cond", "p-perm", "p-tick", "p-sel", "p-sel2"}

// finalizerProbes are the probes with spec.finalizer: p-fin, which
// watches every ConfigMap, and p-sel2, whose selector its edits change
// and the checker's relabels leave, so that its finalizer meets a
// selector (docs/delivery.md, "Guaranteed deletes").
var finalizerProbes = []string{"p-fin", "p-sel2"}

// selectorOf is the values of label l that selector probe rule selects
// (labelSelector "l in (…)") at revision rev; nil for a probe without a
// label selector. p-sel and p-sel2 watch the same resource, namespace
// and field selector, so they share one informer. p-sel2's even
// revisions select what p-sel does, so that a kreact that starts with
// them takes the selector to the API server; its odd ones select
// others, so that the edit of p-sel2 that comes next restarts that
// informer without a selector under p-sel (a hand-over), while the
// checker writes on. Label values a and b are in p-sel, c and x out;
// b is in both of p-sel2's.
func selectorOf(rule string, rev int) []string {
	switch {
	case rule == "p-sel", rule == "p-sel2" && rev%2 == 0:
		return []string{"a", "b"}
	case rule == "p-sel2":
		return []string{"b", "c"}
	}
	return nil
}

// recordJS is the recording function every probe script starts with.
const recordJS = `
    function rec(h, obj, f) {
      f = f || {};
      f.h = h;
      f.at = kreact.now().getTime();
      f.rev = REV;
      if (obj) {
        f.uid = obj.metadata.uid;
        f.rv = obj.metadata.resourceVersion;
        f.obj = obj.metadata.name;
        f.l = (obj.metadata.labels || {}).l || "";
        f.fin = (obj.metadata.finalizers || []).join(",");
        f.deleting = !!obj.metadata.deletionTimestamp;
      }
      kreact.log("probe", f);
    }
    function upd(old, ctx) { return {oldrv: old.metadata.resourceVersion, oldl: (old.metadata.labels || {}).l || "", oldfin: (old.metadata.finalizers || []).join(","), changed: ctx.changed.join(" ")}; }`

// selectorJS is the handlers of the selector probes, which log their
// selector (sel) with every call.
const selectorJS = `
    var SEL = "SELSET";
    function onAdd(cm, ctx) { rec("onAdd", cm, {initial: ctx.initial, sel: SEL}); }
    function onUpdate(old, cm, ctx) { var f = upd(old, ctx); f.sel = SEL; rec("onUpdate", cm, f); }
    function onDelete(cm) { rec("onDelete", cm, {sel: SEL}); }`

// probes returns the probe rule files of a run whose objects live in the
// namespaces of ns, the script of each carrying revision rev[name]; a
// rule in broken gets a script that does not compile.
func probes(ns Namespaces, rev map[string]int, broken string) map[string]string {
	files := map[string]string{
		// The finalizer, once, timers and ignoreChanges, on ConfigMaps.
		"p-fin": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
  finalizer: true
  ignoreChanges: ['metadata.annotations["chaos/ignored"]']
  permissions:
    - resources: [configmaps]
      verbs: [patch]
      namespaces: [MAIN]
  script: |` + recordJS + `
    function arm(cm) { kreact.after(cm, 2000); return kreact.now().getTime() + 2000; }
    function onAdd(cm, ctx) { rec("onAdd", cm, {initial: ctx.initial, once: kreact.once(cm), deadline: arm(cm)}); }
    function onUpdate(old, cm, ctx) { var f = upd(old, ctx); f.deadline = arm(cm); rec("onUpdate", cm, f); }
    function onTimer(cm) { rec("onTimer", cm); }
    function onDelete(cm) { rec("onDelete", cm); }`,
		// Every change, through a projection, on the same ConfigMaps.
		"p-every": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
      fields: [data, metadata.labels]
  delivery: every
  script: |` + recordJS + `
    function onAdd(cm, ctx) { rec("onAdd", cm, {initial: ctx.initial}); }
    function onUpdate(old, cm, ctx) { rec("onUpdate", cm, upd(old, ctx)); }
    function onDelete(cm) { rec("onDelete", cm); }`,
		// Conditions and owned objects, on widgets (status subresource)
		// and gadgets (none: the condition is written with the object).
		"p-cond": `
  watch:
    - resource: widgets.chaos.kreact.dev
      namespaces: [WIDGETS]
    - resource: gadgets.chaos.kreact.dev
      namespaces: [WIDGETS]
  ignoreChanges: [status]
  permissions:
    - resources: [widgets.chaos.kreact.dev]
      verbs: [condition]
      namespaces: [WIDGETS]
    - resources: [gadgets.chaos.kreact.dev]
      verbs: [condition, patch]
      namespaces: [WIDGETS]
    - resources: [configmaps]
      verbs: [apply]
      namespaces: [WIDGETS]
  script: |` + recordJS + `
    function sync(w) {
      var ready = w.spec && w.spec.ready === true;
      kreact.setCondition(w, {type: "Ready", status: ready ? "True" : "False", reason: "Probe", message: "spec.ready is " + ready});
      kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: (w.kind === "Gadget" ? "g-" : "w-") + w.metadata.name, namespace: w.metadata.namespace}, data: {ready: String(ready)}}, {owner: w});
    }
    function onAdd(w, ctx) { sync(w); rec("onAdd", w, {initial: ctx.initial}); }
    function onUpdate(old, w, ctx) { sync(w); rec("onUpdate", w, upd(old, ctx)); }
    function onDelete(w) { rec("onDelete", w); }`,
		// Permissions: a copy where it may write, and a refused one where
		// it may not (label l=x), which fails the whole call.
		"p-perm": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
  events: [add, update]
  retries: 1
  permissions:
    - resources: [configmaps]
      verbs: [apply]
      namespaces: [COPIES]
  script: |` + recordJS + `
    function copy(cm) {
      var ns = (cm.metadata.labels || {}).l === "x" ? "FORBIDDEN" : "COPIES";
      kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "copy-" + cm.metadata.name, namespace: ns}, data: cm.data || {}});
    }
    function onAdd(cm) { copy(cm); }
    function onUpdate(old, cm) { copy(cm); }`,
		// Label selectors, on the ConfigMaps the others watch, through
		// an informer of their own (the field selector, which selects
		// them all): every change one call, so that each move into and
		// out of the selector is a call of its own.
		"p-sel": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
      labelSelector: "SELECTOR"
      fieldSelector: "metadata.name!=none"
  delivery: every
  script: |` + recordJS + selectorJS,
		// Another selector on the same informer, which its edits change
		// (selectorOf); changes coalesced (delivery latest). Its
		// finalizer is on what its selector selects only: an object
		// that leaves it (a relabel, or an edit) must lose it, with
		// onDelete while the rule runs, without one when it happened
		// while the rule was away.
		"p-sel2": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
      labelSelector: "SELECTOR"
      fieldSelector: "metadata.name!=none"
  finalizer: true
  script: |` + recordJS + selectorJS,
		// One tick every 2s, once for the cluster.
		"p-tick": `
  watch:
    - resource: configmaps
      namespaces: [MAIN]
  every: 2s
  script: |` + recordJS + `
    function onTick(ctx) { rec("onTick", null); }`,
	}
	out := map[string]string{}
	for name, spec := range files {
		script := fmt.Sprintf("\n    var REV = %d;", rev[name])
		if name == broken {
			script += "\n    function broken( {"
		}
		body := strings.Replace(spec, "  script: |", "  script: |"+script, 1)
		sel := selectorOf(name, rev[name])
		body = strings.NewReplacer("SELECTOR", "l in ("+strings.Join(sel, ",")+")", "SELSET", strings.Join(sel, ","),
			"MAIN", ns.Main, "WIDGETS", ns.Widgets, "COPIES", ns.Copies, "FORBIDDEN", ns.Forbidden).Replace(body)
		out[name] = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: " + name + "\nspec:" + body + "\n"
	}
	return out
}

// writeProbes writes the probe files into dir, each through a rename so
// that kreact never reads half a file.
func writeProbes(dir string, files map[string]string) error {
	for name, body := range files {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, name+".yaml")); err != nil {
			return err
		}
	}
	return nil
}

// Namespaces are a run's namespaces; each run has its own, so that runs
// (and the reruns of shrinking) on one control plane do not meet.
type Namespaces struct {
	Main, Widgets, Copies, Forbidden, Leases string
}

func namespacesOf(run string) Namespaces {
	return Namespaces{Main: run, Widgets: run + "-w", Copies: run + "-copies", Forbidden: run + "-forbidden", Leases: run + "-leases"}
}
