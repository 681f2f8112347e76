//go:build e2e

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// harness runs the whole stack and an engine until the test ends.
type harness struct {
	t      *testing.T
	engine *engine.Engine
	client dynamic.Interface
	logs   *testcluster.LogBuffer

	informers *dynamicinformer.Manager
}

func start(t *testing.T, opts engine.Options) *harness {
	t.Helper()
	return startWith(t, opts, nil)
}

// startWith is start with the engine's log handler wrapped by wrap, if not
// nil.
func startWith(t *testing.T, opts engine.Options, wrap func(slog.Handler) slog.Handler) *harness {
	t.Helper()
	return startAs(t, cluster.Config(), opts, wrap)
}

// startAs is startWith with the engine's stack connecting with cfg: kreact
// as some identity other than the cluster's administrator.
func startAs(t *testing.T, cfg *rest.Config, opts engine.Options, wrap func(slog.Handler) slog.Handler) *harness {
	t.Helper()
	leaktest.Check(t) // first, so that it runs after the engine has stopped
	logs := &testcluster.LogBuffer{}
	dups := &duplicateKeys{}
	var handler slog.Handler = &uniqueKeys{Handler: slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), dups: dups}
	if wrap != nil {
		handler = wrap(handler)
	}
	logger := slog.New(handler)
	t.Cleanup(func() {
		for _, d := range dups.list() {
			t.Errorf("a log record has an attribute twice: %s", d)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	stack, err := clientstack.Start(ctx, cfg, clientstack.Options{Logger: logger})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	opts.Logger = logger
	e := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, opts)
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = stack.Wait()
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	})
	return &harness{t: t, engine: e, client: stack.Client, logs: logs, informers: stack.Informers}
}

// uniqueKeys is a slog.Handler that notes every record with an attribute
// key twice, its own or from With, at the top level.
type uniqueKeys struct {
	slog.Handler
	with []string
	dups *duplicateKeys
}

type duplicateKeys struct {
	mu   sync.Mutex
	seen []string
}

func (d *duplicateKeys) add(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, s)
}

func (d *duplicateKeys) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

func (h *uniqueKeys) Handle(ctx context.Context, r slog.Record) error {
	keys := slices.Clone(h.with)
	r.Attrs(func(a slog.Attr) bool {
		keys = append(keys, a.Key)
		return true
	})
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			h.dups.add(fmt.Sprintf("%q in %q", keys[i], r.Message))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *uniqueKeys) WithAttrs(as []slog.Attr) slog.Handler {
	with := slices.Clone(h.with)
	for _, a := range as {
		with = append(with, a.Key)
	}
	return &uniqueKeys{Handler: h.Handler.WithAttrs(as), with: with, dups: h.dups}
}

// WithGroup is not used by kreact; keys in a group are not checked.
func (h *uniqueKeys) WithGroup(name string) slog.Handler {
	return &uniqueKeys{Handler: h.Handler.WithGroup(name), with: []string{name}, dups: h.dups}
}

// load parses rule YAML and loads it into the engine.
func (h *harness) load(yaml string) error {
	h.t.Helper()
	rs, err := rules.Parse("rules.yaml", []byte(yaml))
	if err != nil {
		h.t.Fatalf("parse rules: %v", err)
	}
	return h.engine.Load(h.t.Context(), rs)
}

func (h *harness) mustLoad(yaml string) {
	h.t.Helper()
	if err := h.load(yaml); err != nil {
		h.t.Fatalf("load rules: %v", err)
	}
	testcluster.Eventually(h.t, "rules to sync", synced(h.engine))
}

func (h *harness) namespace(name string) {
	h.t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := h.client.Resource(namespaces).Create(h.t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Fatal(err)
	}
}

func (h *harness) configMap(ns, name string, labels map[string]string, data map[string]string) {
	h.t.Helper()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	cm.SetNamespace(ns)
	cm.SetName(name)
	cm.SetLabels(labels)
	if data != nil {
		_ = unstructured.SetNestedStringMap(cm.Object, data, "data")
	}
	if _, err := h.client.Resource(configMaps).Namespace(ns).Create(h.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) label(ns, name, key string) (string, bool) {
	cm, err := h.client.Resource(configMaps).Namespace(ns).Get(h.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	v, ok := cm.GetLabels()[key]
	return v, ok
}

// labelRule is a rule that labels configmaps of a namespace on add.
func labelRule(name, ns, label, value string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: cm
      namespaces: [%s]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {%q: %q}}});
    }
`, name, ns, label, value)
}

func TestRuleReactsToAdds(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("react")
	h.configMap("react", "before", nil, nil)
	h.mustLoad(labelRule("labeler", "react", "seen", "yes"))
	h.configMap("react", "after", nil, nil)
	for _, name := range []string{"before", "after"} {
		testcluster.Eventually(h.t, "configmap "+name+" to be labelled", func() bool { v, _ := h.label("react", name, "seen"); return v == "yes" })
	}
}

func TestBrokenScriptsAreReportedAndOthersKeepWorking(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("broken")
	rulesYAML := labelRule("good", "broken", "good", "yes") + `---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: thrower
spec:
  watch:
    - resource: configmaps
      namespaces: [broken]
  script: |
    function onAdd(obj, ctx) {
      throw new Error("boom on " + obj.metadata.name);
    }
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: looper
spec:
  watch:
    - resource: configmaps
      namespaces: [broken]
  timeout: 100ms
  script: |
    function onAdd(obj, ctx) {
      for (;;) {}
    }
`
	h.mustLoad(rulesYAML)
	for i := range 3 {
		h.configMap("broken", fmt.Sprintf("cm-%d", i), nil, nil)
	}
	for i := range 3 {
		name := fmt.Sprintf("cm-%d", i)
		testcluster.Eventually(h.t, name+" labelled by the good rule", func() bool { v, _ := h.label("broken", name, "good"); return v == "yes" })
	}
	testcluster.Eventually(h.t, "the thrower reported with its position", func() bool {
		return strings.Contains(h.logs.String(), "rule=thrower") && strings.Contains(h.logs.String(), "position=rules.yaml:27:13")
	})
	testcluster.Eventually(h.t, "the looper reported as timed out", func() bool {
		logs := h.logs.String()
		return strings.Contains(logs, "rule=looper") && strings.Contains(logs, "timed out")
	})
	// The same throw on every ConfigMap, and its retries, are one failure
	// to the reader: logged in full once, then counted (reaction's
	// failure log, every 10s).
	testcluster.Eventually(h.t, "the thrower's repeats counted", func() bool {
		for _, l := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(l, "rule=thrower") && strings.Contains(l, "repeated=") {
				return true
			}
		}
		return false
	})
}

// failures is an engine.Options.Failures that records the rules of the
// failed calls and their errors.
type failures struct {
	mu    sync.Mutex
	calls []string
}

func (f *failures) CallFailed(rule string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, rule+": "+err.Error())
}

func (f *failures) told() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Options.Failures is told of each failed call of every rule, with its
// error (package isolation moves a rule on it), and of no call that
// returned.
func TestFailuresAreToldOfFailedCalls(t *testing.T) {
	f := &failures{}
	h := start(t, engine.Options{Failures: f})
	h.namespace("failing")
	h.mustLoad(labelRule("good", "failing", "good", "yes") + `---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: thrower
spec:
  watch:
    - resource: configmaps
      namespaces: [failing]
  retries: 0
  script: |
    function onAdd(obj, ctx) {
      if (obj.metadata.name === "bad") throw new Error("boom on " + obj.metadata.name);
    }
`)
	h.configMap("failing", "fine", nil, nil)
	h.configMap("failing", "bad", nil, nil)
	for _, name := range []string{"fine", "bad"} {
		testcluster.Eventually(h.t, name+" labelled by the good rule", func() bool { v, _ := h.label("failing", name, "good"); return v == "yes" })
	}
	testcluster.Eventually(h.t, "Failures told of the thrower's call", func() bool { return len(f.told()) > 0 })
	if got := f.told(); len(got) != 1 || !strings.HasPrefix(got[0], "thrower: ") || !strings.Contains(got[0], "boom on bad") {
		t.Errorf("Failures told %q; want the thrower's one failed call, with its error", got)
	}
}

func TestUndeclaredActionIsRefused(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("perm")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: sneaky
spec:
  watch:
    - resource: configmaps
      namespaces: [perm]
  script: |
    function onAdd(obj, ctx) {
      kreact.delete(obj);
    }
`)
	h.configMap("perm", "keep-me", nil, nil)
	testcluster.Eventually(h.t, "the refusal to be logged", func() bool {
		logs := h.logs.String()
		return strings.Contains(logs, "rule=sneaky") && strings.Contains(logs, "delete") && strings.Contains(logs, "spec.permissions")
	})
	if _, err := h.client.Resource(configMaps).Namespace("perm").Get(t.Context(), "keep-me", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap gone after a refused delete: %v", err)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	h := start(t, engine.Options{DryRun: true})
	h.namespace("dry")
	h.mustLoad(labelRule("dry-labeler", "dry", "seen", "yes"))
	h.configMap("dry", "untouched", nil, nil)
	testcluster.Eventually(h.t, "the dry-run patch to be logged", func() bool { return strings.Contains(h.logs.String(), "dry-run: would patch") })
	if _, ok := h.label("dry", "untouched", "seen"); ok {
		t.Error("dry-run rule labelled the configmap")
	}
}

func TestReloadReplacesRulesAndKeepsThemOnError(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("reload")
	h.mustLoad(labelRule("versioned", "reload", "version", "one"))
	h.configMap("reload", "a", nil, nil)
	testcluster.Eventually(h.t, "version one", func() bool { v, _ := h.label("reload", "a", "version"); return v == "one" })

	h.mustLoad(labelRule("versioned", "reload", "version", "two"))
	h.configMap("reload", "b", nil, nil)
	testcluster.Eventually(h.t, "version two on a new object", func() bool { v, _ := h.label("reload", "b", "version"); return v == "two" })

	broken := strings.Replace(labelRule("versioned", "reload", "version", "three"), "function onAdd(obj, ctx) {", "function onAdd(obj, ctx) { if (", 1)
	err := h.load(broken)
	if err == nil || !strings.Contains(err.Error(), "rules.yaml:") {
		t.Fatalf("loading a broken script = %v, want a positioned syntax error", err)
	}
	h.configMap("reload", "c", nil, nil)
	testcluster.Eventually(h.t, "version two still running", func() bool { v, _ := h.label("reload", "c", "version"); return v == "two" })
}

// A reload that misspells the watched resource is refused like a syntax
// error, with the did-you-mean hint, and the running version stays.
func TestReloadWithMisspeltResourceKeepsTheRunningVersion(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("typo")
	h.mustLoad(labelRule("versioned", "typo", "version", "one"))
	h.configMap("typo", "a", nil, nil)
	testcluster.Eventually(h.t, "version one", func() bool { v, _ := h.label("typo", "a", "version"); return v == "one" })

	misspelt := strings.Replace(labelRule("versioned", "typo", "version", "two"), "resource: cm", "resource: confgimaps", 1)
	err := h.load(misspelt)
	var re *diag.Error
	if !errors.As(err, &re) || re.Pos.Rule != "versioned" {
		t.Fatalf("loading a misspelt resource = %v, want a diag.Error of rule versioned", err)
	}
	if want := `rules.yaml:7:17: spec.watch[0].resource: "confgimaps": no such resource; did you mean "configmaps"?`; err.Error() != want {
		t.Errorf("error = %q, want %q", err.Error(), want)
	}
	if st := h.engine.Status(); len(st) != 1 || !st[0].Running {
		t.Errorf("status = %+v, want the previous version running", st)
	}
	h.configMap("typo", "b", nil, nil)
	testcluster.Eventually(h.t, "version one still running", func() bool { v, _ := h.label("typo", "b", "version"); return v == "one" })
}

// A rule set whose only rule names a misspelt resource runs nothing and
// says why; a name that is close to nothing served waits (it may be a CRD
// to come).
func TestMisspeltResourceIsAnErrorAndUnknownOneWaits(t *testing.T) {
	h := start(t, engine.Options{})
	err := h.load(strings.Replace(labelRule("typo", "default", "x", "y"), "resource: cm", "resource: deploymnets", 1))
	if err == nil || !strings.Contains(err.Error(), `"deploymnets": no such resource; did you mean "deployments"?`) {
		t.Fatalf("load = %v, want the did-you-mean hint", err)
	}
	if st := h.engine.Status(); len(st) != 0 {
		t.Errorf("status = %+v, want no rule", st)
	}
	for _, ref := range []string{"sprockets.example.kreact.dev", "configmaps.not-served.example.com"} {
		err := h.load(strings.Replace(labelRule("later", "default", "x", "y"), "resource: cm", "resource: "+ref, 1))
		if err != nil {
			t.Fatalf("load with %s = %v, want the rule to wait", ref, err)
		}
		if st := h.engine.Status(); len(st) != 1 || st[0].Running || st[0].Waiting == "" {
			t.Errorf("status with %s = %+v, want the rule waiting", ref, st)
		}
	}
}

func TestRuleWaitsForItsCRD(t *testing.T) {
	h := start(t, engine.Options{})
	crd := testcluster.CRD{Group: "engine.kreact.dev", Kind: "Gadget", Plural: "gadgets", ShortNames: []string{"gd"}}
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: gadgets
spec:
  watch:
    - resource: gadgets.engine.kreact.dev
  permissions:
    - resources: [gadgets.engine.kreact.dev]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {status: {seen: true}}, {subresource: "status"});
    }
`)
	if st := h.engine.Status(); len(st) != 1 || st[0].Running || st[0].Waiting == "" {
		t.Fatalf("status before the CRD = %+v, want the rule waiting", st)
	}
	if err := testcluster.CreateCRD(t.Context(), h.client, crd); err != nil {
		t.Fatal(err)
	}
	gadgets := h.client.Resource(crd.GVR()).Namespace("default")
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "engine.kreact.dev/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"}}}
	testcluster.Eventually(h.t, "the gadget to be created", func() bool {
		_, err := gadgets.Create(t.Context(), g, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	testcluster.Eventually(h.t, "the rule to mark the gadget", func() bool {
		obj, err := gadgets.Get(t.Context(), "g1", metav1.GetOptions{})
		if err != nil {
			return false
		}
		seen, _, _ := unstructured.NestedBool(obj.Object, "status", "seen")
		return seen
	})
}

func TestEveryCallsOnTick(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("ticks")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ticker
spec:
  watch:
    - resource: configmaps
      namespaces: [ticks]
  every: 1s
  permissions:
    - resources: [configmaps]
      verbs: [apply]
  script: |
    let ticks = 0;
    function onTick(ctx) {
      ticks++;
      kreact.apply({apiVersion: "v1", kind: "ConfigMap",
        metadata: {name: "heartbeat", namespace: "ticks"},
        data: {ticks: String(ticks), event: ctx.event}});
    }
`)
	testcluster.Eventually(h.t, "two ticks", func() bool {
		cm, err := h.client.Resource(configMaps).Namespace("ticks").Get(t.Context(), "heartbeat", metav1.GetOptions{})
		if err != nil {
			return false
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		return data["event"] == "tick" && data["ticks"] >= "2"
	})
}

// Records that a script writes, and the informer's line when a removed
// rule's watch stops, have each attribute once (the harness's handler
// checks every record of every test).
func TestLogRecordsHaveEachAttributeOnce(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("logs")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: logger
spec:
  watch:
    - resource: configmaps
      namespaces: [logs]
  script: |
    function onAdd(obj) {
      kreact.log("hello", {name: obj.metadata.name});
      console.log("from console");
    }
`)
	h.configMap("logs", "a", nil, nil)
	testcluster.Eventually(t, "the script's records", func() bool {
		s := h.logs.String()
		return strings.Contains(s, `msg=hello rule=logger origin=rules.yaml:11:17 name=a`) && strings.Contains(s, `msg="from console" rule=logger`)
	})
	if err := h.engine.Load(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the informer to stop", func() bool {
		return strings.Contains(h.logs.String(), "component=dynamicinformer") && strings.Contains(h.logs.String(), "rule removed")
	})
}

// synced reports whether every running rule of e has caught up with its
// watches, as kreact run's readiness does (engine.RulesBehind).
func synced(e *engine.Engine) func() bool {
	return func() bool { return len(engine.RulesBehind(e.Status())) == 0 }
}
