package validate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/restmapper"
)

const header = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: "

func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, []byte(data), 0o644)); err != nil {
		t.Fatal(err)
	}
	return path
}

func builtinMapper() *restmapper.Mapper {
	return restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		problems []string
		notFound bool
	}{
		{
			name: "valid",
			rule: "ok\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onAdd(obj, ctx) {}\n",
		},
		{
			name: "misspelt handler",
			rule: "typo\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onAdd(obj, ctx) {}\n    function onUpate(o, n, ctx) {}\n",
			problems: []string{
				`r.yaml:10:14: warning: rule "typo": onUpate is not a handler and is never called (did you mean onUpdate?)`,
			},
		},
		{
			name: "misspelt handler in TypeScript",
			rule: "ts\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  scriptLang: ts\n  script: |\n    function onAdd(obj: any, ctx: any): void {}\n    const onadd = (x: number): number => x;\n",
			problems: []string{
				`r.yaml:11:11: warning: rule "ts": onadd is not a handler and is never called (did you mean onAdd?)`,
			},
		},
		{
			name: "never runs",
			rule: "idle\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onUpdate(o, n, ctx) {}\n",
			problems: []string{
				`r.yaml:4:9: warning: rule "idle": onUpdate is never called: spec.events does not list update`,
				`r.yaml:4:9: rule "idle": the rule never runs: spec.events lists add but the script declares no onAdd`,
			},
		},
		{
			name: "reads outside spec.watch[].fields",
			rule: "proj\nspec:\n  watch:\n    - resource: deployments\n      fields: [spec.replicas]\n  events: [add, update]\n  script: |\n" +
				"    function onUpdate(oldObj, newObj, ctx) {\n" +
				"      if (newObj.spec.replicas !== oldObj.spec.replicas) kreact.log(newObj.spec.template.spec.containers[0].image + newObj.metadata.labels.app);\n" +
				"    }\n" +
				"    function onAdd(obj) { kreact.log(obj.status.readyReplicas + obj.status.replicas); }\n",
			problems: []string{
				`r.yaml:12:69: warning: rule "proj": onUpdate reads newObj.spec.template, which spec.watch[0].fields (at 8:15) does not keep: it is undefined under kreact run`,
				`r.yaml:14:38: warning: rule "proj": onAdd reads obj.status, which spec.watch[0].fields (at 8:15) does not keep: it is undefined under kreact run`,
			},
		},
		{
			name: "reads outside spec.watch[].fields, but an entry keeps whole objects",
			rule: "mixed\nspec:\n  watch:\n    - {resource: deployments, fields: [spec.replicas]}\n    - {resource: statefulsets}\n  events: [add]\n" +
				"  script: 'function onAdd(obj) { kreact.log(obj.status.replicas); }'\n",
		},
		{
			name: "reads outside spec.watch[].fields, but spec.reads makes the watch keep whole objects",
			rule: "read\nspec:\n  watch: [{resource: deployments, fields: [spec.replicas]}]\n  reads: [deployments]\n  events: [add]\n" +
				"  script: 'function onAdd(obj) { kreact.log(obj.status.replicas); }'\n",
		},
		{
			name: "ignoreChanges swallows what an update-only rule reads",
			rule: "swallowed\nspec:\n  watch: [{resource: configmaps}]\n  events: [update]\n  ignoreChanges: [status, metadata]\n  script: |\n" +
				"    function onUpdate(oldObj, obj, ctx) { kreact.log(obj.metadata.name + obj.metadata.annotations.restartedAt); }\n",
			problems: []string{
				`r.yaml:8:27: warning: rule "swallowed": every path onUpdate reads (obj.metadata.annotations.restartedAt) is under spec.ignoreChanges, so a change to them never calls it (spec.events lists update only); narrow spec.ignoreChanges if onUpdate is meant to see them`,
			},
		},
		{
			name: "ignoreChanges swallows everything an update-only rule keeps",
			rule: "deaf\nspec:\n  watch: [{resource: configmaps, fields: [data]}]\n  events: [update]\n  ignoreChanges: [data, metadata]\n  script: |\n" +
				"    function onUpdate(oldObj, obj, ctx) { kreact.log(obj.metadata.name); }\n",
			problems: []string{
				`r.yaml:8:19: warning: rule "deaf": spec.ignoreChanges swallows every change onUpdate could see (spec.events lists update only, and spec.watch[].fields keeps only ignored paths): onUpdate is never called`,
			},
		},
		{
			name: "ignoreChanges that leaves what onUpdate reads",
			rule: "fine\nspec:\n  watch: [{resource: configmaps, fields: [data]}]\n  events: [update]\n  ignoreChanges: [metadata]\n  script: |\n" +
				"    function onUpdate(oldObj, obj, ctx) { kreact.log(obj.data.x + obj.metadata.labels.app); }\n",
		},
		{
			name: "once without patch",
			rule: "greet\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  permissions: [{resources: [configmaps], verbs: [event]}]\n  script: |\n" +
				"    function onAdd(obj) {\n      if (kreact.once(obj)) kreact.event(obj, {reason: \"Hi\"});\n    }\n",
			problems: []string{
				`r.yaml:11:11: kreact.once marks the object of its handler with a patch: rule "greet" may not patch configmaps: add {resources: [configmaps], verbs: [patch]} to spec.permissions`,
			},
		},
		{
			name: "once with patch in the watched namespaces",
			rule: "greet\nspec:\n  watch: [{resource: configmaps, namespaces: [a]}]\n  events: [add]\n  permissions: [{resources: [configmaps], verbs: [patch]}]\n  script: |\n" +
				"    function onAdd(obj) {\n      if (kreact.once(obj)) kreact.log(\"hi\");\n    }\n",
		},
		{
			name: "admission handlers only",
			rule: "admit\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onValidate(req, ctx) {}\n",
		},
		{
			name: "admission handlers that cannot be called",
			rule: "admit\nspec:\n  watch:\n    - resource: validatingwebhookconfigurations\n" +
				"    - {resource: pods, namespaces: [kube-system], fieldSelector: spec.nodeName=n1}\n" +
				"  events: [delete]\n  timeout: 5s\n  admission: {timeout: 5s}\n  script: |\n    function onValidate(req, ctx) {}\n    function onMutate(req, ctx) {}\n",
			problems: []string{
				`r.yaml:4:9: rule "admit": onMutate is never called: spec.events lists only delete, and a deletion has nothing to change`,
				`r.yaml:7:17: spec.watch[0]: the API server does not call admission webhooks for validatingwebhookconfigurations.admissionregistration.k8s.io, so onValidate and onMutate cannot see them`,
				`r.yaml:8:18: spec.watch[1]: a field selector cannot narrow admission requests (webhooks select by namespace and labels); check the field in onValidate or onMutate instead`,
				`r.yaml:8:36: rule "admit": spec.watch[1].namespaces: kube-system is never intercepted, so that kreact cannot lock the control plane out`,
				`r.yaml:11:3: rule "admit": spec.timeout (5s) must be shorter than spec.admission.timeout (5s), or the API server stops waiting before the handler is stopped`,
			},
		},
		{
			name: "failurePolicy Fail in audit mode",
			rule: "audited\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  admission: {mode: audit, failurePolicy: Fail}\n  script: |\n    function onValidate(req, ctx) { return 'no'; }\n",
			problems: []string{
				`r.yaml:8:3: warning: rule "audited": spec.admission.failurePolicy Fail has no effect in audit mode, which refuses nothing, a failed call neither: its webhooks have failurePolicy Ignore`,
			},
		},
		{
			name: "admission block without admission handlers",
			rule: "react\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  admission: {mode: audit}\n  script: |\n    function onAdd(obj, ctx) {}\n",
			problems: []string{
				`r.yaml:8:3: warning: rule "react": spec.admission applies to onValidate and onMutate, and the script declares neither`,
			},
		},
		{
			name: "script and resources",
			rule: "broken\nspec:\n  watch: [{resource: confgimaps}, {resource: widgets}]\n  events: [add]\n  script: |\n    function onAdd(obj, ctx) {\n",
			problems: []string{
				`r.yaml:6:22: spec.watch[0].resource: "confgimaps": no such resource; did you mean "configmaps"?`,
				`r.yaml:6:46: spec.watch[1].resource: "widgets": no such resource`,
				`r.yaml:10:1: rule "broken": script: Unexpected end of input`,
			},
			notFound: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "r.yaml", header+tt.rule)
			res, err := Check(t.Context(), []string{filepath.Join(dir, "r.yaml")}, builtinMapper(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range res.Problems {
				got = append(got, strings.TrimPrefix(p.Error(), dir+string(filepath.Separator)))
			}
			if !slices.Equal(got, tt.problems) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.problems, "\n"))
			}
			if res.NotFound != tt.notFound || res.Files != 1 || len(res.Rules) != 1 {
				t.Fatalf("NotFound, Files, Rules = %v, %d, %d; want %v, 1, 1", res.NotFound, res.Files, len(res.Rules), tt.notFound)
			}
			if errs, _ := res.Problems.Count(); (errs == 0) != (len(res.Resolved) == 1) {
				t.Errorf("%d errors and %d resolved rules; want a resolved rule exactly when there is no error", errs, len(res.Resolved))
			}
			for _, p := range res.Problems {
				if p.Pos.Line > 0 && !strings.HasPrefix(p.Msg, "spec.") && p.Pos.Rule != res.Rules[0].Name {
					t.Errorf("%v: Pos.Rule = %q, want the rule's name", p, p.Pos.Rule)
				}
			}
		})
	}
}

// TestCheckGoesOnPastBrokenFiles: the rules of the files that load are
// checked even when another file does not load.
func TestCheckGoesOnPastBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", header+"a\nspec:\n  watch: [{resource: configmaps}]\n  bogus: 1\n  script: 'function onAdd() {}'\n")
	write(t, dir, "b.yaml", header+"b\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onAdd() {'\n")
	res, err := Check(t.Context(), []string{dir}, builtinMapper(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 || len(res.Rules) != 1 || res.Rules[0].Name != "b" {
		t.Fatalf("Files, Rules = %d, %v; want 2 files and rule b", res.Files, res.Rules)
	}
	if errs, _ := res.Problems.Count(); errs != 2 || !strings.Contains(res.Problems.Error(), `a.yaml:7:3: unknown field "spec.bogus"`) ||
		!strings.Contains(res.Problems.Error(), `b.yaml:7:30: rule "b": script: Unexpected end of input`) {
		t.Errorf("problems:\n%v\nwant one in each file", res.Problems)
	}
}

func TestCheckStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "r.yaml", header+"ok\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onAdd() {}'\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Check(ctx, []string{dir}, builtinMapper(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Check = %v, want context.Canceled", err)
	}
}

// crdFile is a CRD manifest of the examples.
const crdFile = "../examples/crds/backup.yaml"

func TestInputs(t *testing.T) {
	dir := t.TempDir()
	crdData, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	crd := string(crdData)
	rule := write(t, dir, "rule.yaml", header+"x\n")
	top := write(t, dir, "widgets.yaml", crd)
	nested := write(t, dir, "crds/more.yaml", crd)
	write(t, dir, "tests/t.yaml", "apiVersion: kreact.dev/v1alpha1\nkind: RuleTest\n")
	write(t, dir, "test.yaml", "apiVersion: kreact.dev/v1alpha1\nkind: RuleTest\n")
	missing := filepath.Join(dir, "missing.yaml")
	ruleFiles, crdFiles := Inputs([]string{dir, missing})
	if want := []string{rule, missing}; !slices.Equal(ruleFiles, want) {
		t.Errorf("rule files = %q, want %q", ruleFiles, want)
	}
	if want := []string{top, nested}; !slices.Equal(crdFiles, want) {
		t.Errorf("CRD files = %q, want %q", crdFiles, want)
	}

	rs, errs := CRDResources(append(crdFiles, missing))
	if len(rs) != 2 || len(errs) != 1 || errs[0].Pos.File != missing || !errors.Is(errs[0], os.ErrNotExist) {
		t.Errorf("CRDResources = %d resources, %v; want 2 and the missing file", len(rs), errs)
	}
}

// NewMapper resolves the built-in resources and those of the CRD files,
// and reports a CRD file that does not load.
func TestNewMapper(t *testing.T) {
	m, errs := NewMapper(nil, []string{"../examples/crds/backup.yaml"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, name := range []string{"deploy", "configmaps", "backups"} {
		if _, err := m.Resolve(name); err != nil {
			t.Errorf("Resolve(%s): %v", name, err)
		}
	}
	bad := write(t, t.TempDir(), "bad.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [\n")
	if m, errs := NewMapper(nil, []string{bad}); m != nil || len(errs) == 0 || !strings.Contains(errs.Error(), bad) {
		t.Errorf("NewMapper(bad.yaml) = %v, %v; want its problems and no mapper", m, errs)
	}
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	ok := write(t, dir, "ok.yaml", header+"ok\nspec:\n  watch: [{resource: configmaps}]\n  events: [add, update]\n  script: 'function onAdd() {}'\n")
	broken := write(t, dir, "broken.yaml", header+"broken\nspec:\n  watch: [{resource: nopes}]\n  script: 'function onAdd() {}'\n")
	for _, c := range []struct {
		paths  []string
		want   string
		wantOK bool
	}{
		{[]string{ok}, "ok: 1 rule in 1 file, 1 warning", true},
		{[]string{ok, broken}, "validate: 1 error, 3 warnings in 2 files", false},
	} {
		r, err := Check(t.Context(), c.paths, builtinMapper(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if line, ok := r.Summary(); line != c.want || ok != c.wantOK {
			t.Errorf("Summary = %q, %v; want %q, %v", line, ok, c.want, c.wantOK)
		}
	}
}

// The problems are written one a line; a resource unknown without a
// cluster adds the hint of what resolves custom resources.
func TestWriteProblems(t *testing.T) {
	r := &Result{Problems: diag.ErrorList{
		{Pos: diag.Position{File: "a.yaml", Line: 3, Col: 5}, Msg: "no resource backups"},
		{Pos: diag.Position{File: "a.yaml", Line: 7, Col: 1}, Msg: "unused", Warning: true},
	}, NotFound: true}
	const problems = "a.yaml:3:5: no resource backups\na.yaml:7:1: warning: unused\n"
	const hint = "hint: custom resources resolve with --crd FILE, or against a cluster with --kubeconfig/--context\n"
	for _, c := range []struct {
		live bool
		want string
	}{
		{false, problems + hint},
		{true, problems},
	} {
		var out strings.Builder
		r.WriteProblems(&out, c.live)
		if out.String() != c.want {
			t.Errorf("WriteProblems(live %v) =\n%s\nwant\n%s", c.live, out.String(), c.want)
		}
	}
}

// TestCheckValid: rbac and webhooks refuse what validate refuses, every
// error at once, and not what it only warns about; the rules with
// admission handlers come with the result.
func TestCheckValid(t *testing.T) {
	dir := t.TempDir()
	warned := write(t, dir, "warned.yaml", header+"warned\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onAdd(obj, ctx) {}\n    function onUpate(o, n, ctx) {}\n")
	admits := write(t, dir, "admits.yaml", header+"admits\nspec:\n  watch: [{resource: configmaps}]\n  script: |\n    function onValidate(req, ctx) {}\n")
	c, admitting, err := CheckValid(t.Context(), []string{warned, admits}, builtinMapper(), Options{})
	if err != nil || len(c.Resolved) != 2 || len(admitting) != 1 || admitting[0].Resolved.Rule.Name != "admits" {
		t.Errorf("CheckValid of a warned and an admitting rule = %v, %d admitting, %v; want both resolved, admits admitting", c, len(admitting), err)
	}
	broken := write(t, dir, "broken.yaml", header+"broken\nspec:\n  watch: [{resource: confgimaps}]\n  script: |\n    function onAdd(obj, ctx) { let x = ; }\n")
	_, _, err = CheckValid(t.Context(), []string{warned, broken}, builtinMapper(), Options{})
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Errorf("CheckValid of a broken rule = %v, want its two errors", err)
	}
}

// TestCheckRunnable: record and preview take the rules that run, and
// refuse a rule set with an error, or with no rule at all.
func TestCheckRunnable(t *testing.T) {
	dir := t.TempDir()
	ok := write(t, dir, "ok.yaml", header+"ok\nspec:\n  watch: [{resource: configmaps}]\n  events: [add]\n  script: |\n    function onAdd(obj, ctx) {}\n")
	rs, err := CheckRunnable(t.Context(), []string{ok}, builtinMapper())
	if err != nil || len(rs) != 1 || rs[0].Name != "ok" {
		t.Errorf("CheckRunnable of a good rule = %v, %v", rs, err)
	}
	broken := write(t, dir, "broken.yaml", header+"broken\nspec:\n  watch: [{resource: confgimaps}]\n  script: |\n    function onAdd(obj, ctx) {}\n")
	var list diag.ErrorList
	if _, err := CheckRunnable(t.Context(), []string{ok, broken}, builtinMapper()); !errors.As(err, &list) {
		t.Errorf("CheckRunnable with a broken rule = %v, want its errors", err)
	}
	empty := write(t, filepath.Join(dir, "empty"), "none.yaml", "# no rule here\n")
	var none *engine.NoRulesError
	if _, err := CheckRunnable(t.Context(), []string{filepath.Dir(empty)}, builtinMapper()); !errors.As(err, &none) {
		t.Errorf("CheckRunnable of a folder without rules = %v, want an engine.NoRulesError", err)
	}
}
