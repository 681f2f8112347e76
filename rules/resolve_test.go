package rules

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
)

// fakeResolver knows a few resources by the names kubectl accepts and
// counts the calls.
type fakeResolver struct {
	calls map[string]int
}

var _ Resolver = (*fakeResolver)(nil)

func (f *fakeResolver) Resolve(ref string) (apiresource.Resource, error) {
	if f.calls == nil {
		f.calls = make(map[string]int)
	}
	f.calls[ref]++
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	switch ref {
	case "deploy", "deployments", "deployments.apps", "apps/v1 Deployment":
		return apiresource.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Kind: "Deployment", Namespaced: true, Verbs: all, Subresources: []string{"scale", "status"}}, nil
	case "cm", "configmaps":
		return apiresource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Kind: "ConfigMap", Namespaced: true, Verbs: all}, nil
	case "secrets":
		return apiresource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
			Kind: "Secret", Namespaced: true, Verbs: all}, nil
	case "nodes", "no":
		return apiresource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"},
			Kind: "Node", Verbs: all}, nil
	case "componentstatuses":
		return apiresource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"},
			Kind: "ComponentStatus", Verbs: []string{"get", "list"}}, nil
	case "widgets.example.com":
		// A resolver that does not report verbs.
		return apiresource.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
			Kind: "Widget", Namespaced: true}, nil
	}
	if strings.HasPrefix(ref, "deploym") {
		return apiresource.Resource{}, fmt.Errorf("unknown resource %q; did you mean \"deployments.apps\"?", ref)
	}
	return apiresource.Resource{}, fmt.Errorf("unknown resource %q", ref)
}

func mustParse(t *testing.T, src string) *Rule {
	t.Helper()
	rules, err := Parse("r.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 {
		t.Fatalf("got %d rules, want 1", len(rules))
	}
	return rules[0]
}

const resolveOK = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: ok}
spec:
  watch:
    - resource: cm
      namespaces: [default]
    - resource: configmaps
      namespaces: [prod]
    - resource: configmaps
      namespaces: [default]
      labelSelector: app=web
    - resource: nodes
  reads: [deploy, deployments.apps, widgets.example.com]
  permissions:
    - resources: [deploy]
      verbs: [patch, event]
    - resources: [deployments.apps, widgets.example.com]
      verbs: [delete, patch]
    - resources: [nodes]
      verbs: [event]
  http: [http://127.0.0.1:9999/hooks/]
  script: x
`

func TestResolve(t *testing.T) {
	r := mustParse(t, resolveOK)
	fake := &fakeResolver{}
	res, err := r.Resolve(fake)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rule != r {
		t.Error("Resolved.Rule is not the rule")
	}
	if fake.calls["configmaps"] != 1 || fake.calls["deploy"] != 1 {
		t.Errorf("references resolved more than once: %v", fake.calls)
	}
	var watched []string
	for _, w := range res.Watch {
		watched = append(watched, w.Watch.Resource+"="+w.Resource.GVR.String())
	}
	wantWatched := []string{"cm=/v1, Resource=configmaps", "configmaps=/v1, Resource=configmaps",
		"configmaps=/v1, Resource=configmaps", "nodes=/v1, Resource=nodes"}
	if !reflect.DeepEqual(watched, wantWatched) {
		t.Errorf("watch = %v, want %v", watched, wantWatched)
	}
	if len(res.Reads) != 2 {
		t.Errorf("reads = %v, want deployments and widgets once each", res.Reads)
	}
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	// Watched namespaces: default and prod (nodes are cluster-scoped).
	watchedNS := []string{"default", "prod"}
	wantPerms := map[schema.GroupResource][]Grant{
		deployments: {{actions.Patch, watchedNS}, {actions.Delete, watchedNS}, {actions.Event, watchedNS}},
		{Group: "example.com", Resource: "widgets"}: {{actions.Patch, watchedNS}, {actions.Delete, watchedNS}},
		{Resource: "nodes"}:                         {{Verb: actions.Event}},
	}
	if !reflect.DeepEqual(res.Permissions, wantPerms) {
		t.Errorf("permissions = %v, want %v", res.Permissions, wantPerms)
	}

	deployV1 := deployments.WithVersion("v1")
	tests := []struct {
		name string
		err  error
		want string // "" for allowed
	}{
		{"patch deployments", res.Allows(actions.Patch, deployV1, "prod"), ""},
		{"other version", res.Allows(actions.Delete, deployments.WithVersion("v1beta2"), "default"), ""},
		{"event about a node", res.Allows(actions.Event, schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, ""), ""},
		{"patch deployments elsewhere", res.Allows(actions.Patch, deployV1, "kube-system"),
			`rule "ok" may not patch deployments.apps in namespace kube-system: its permission covers namespaces default, prod; add kube-system to spec.permissions[].namespaces`},
		{"create deployments", res.Allows(actions.Create, deployV1, "prod"),
			`rule "ok" may not create deployments.apps: add {resources: [deployments.apps], verbs: [create]} to spec.permissions`},
		{"patch configmaps", res.Allows(actions.Patch, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default"),
			`rule "ok" may not patch configmaps: add {resources: [configmaps], verbs: [patch]} to spec.permissions`},
		{"http via Allows", res.Allows(actions.HTTP, schema.GroupVersionResource{}, ""),
			`rules: http actions are allowed by URL; use Rule.AllowsHTTP`},
		{"read watched", res.Readable(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}), ""},
		{"read listed", res.Readable(deployV1), ""},
		{"read secrets", res.Readable(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}),
			`rule "ok" may not read secrets: add it to spec.reads`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.err != nil:
				t.Errorf("refused: %v", tt.err)
			case tt.want != "" && (tt.err == nil || tt.err.Error() != tt.want):
				t.Errorf("err = %v, want %s", tt.err, tt.want)
			}
		})
	}
	var pe *PermissionError
	if err := res.Allows(actions.Create, deployV1, "prod"); !errors.As(err, &pe) || pe.Verb != "create" || pe.Target != "deployments.apps" {
		t.Errorf("Allows error %#v is not a *PermissionError naming create deployments.apps", err)
	}
}

func TestResolveErrors(t *testing.T) {
	const src = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: broken}
spec:
  watch:
    - resource: deploymnts
    - resource: nodes
      namespaces: [default]
    - resource: componentstatuses
    - resource: configmaps
      namespaces: [a, b]
    - resource: cm
      namespaces: [b]
    - resource: configmaps
      labelSelector: app=web
  reads: [secretz, deploymnts]
  permissions:
    - resources: [componentstatuses]
      verbs: [create, event]
  script: x
`
	r := mustParse(t, src)
	_, err := r.Resolve(&fakeResolver{})
	if err == nil {
		t.Fatal("Resolve succeeded")
	}
	want := `r.yaml:6:17: spec.watch[0].resource: unknown resource "deploymnts"; did you mean "deployments.apps"?
r.yaml:8:19: spec.watch[1].namespaces: nodes is cluster-scoped; leave namespaces out
r.yaml:9:17: spec.watch[2].resource: componentstatuses cannot be watched: the server does not allow list and watch on it
r.yaml:12:17: spec.watch[4]: watches the same objects as spec.watch[3] (at 10:17); each change would be handled twice
r.yaml:16:11: spec.reads[0]: unknown resource "secretz"
r.yaml:16:20: spec.reads[1]: unknown resource "deploymnts"; did you mean "deployments.apps"?
r.yaml:18:19: spec.permissions[0].resources[0]: componentstatuses does not support create (the server allows get, list)`
	if err.Error() != want {
		t.Errorf("Resolve errors:\n%v\nwant:\n%s", err, want)
	}
	var list diag.ErrorList
	if !errors.As(err, &list) {
		t.Errorf("error is %T, want diag.ErrorList", err)
	}
}

func TestAllowsHTTP(t *testing.T) {
	r := &Rule{Name: "h", HTTP: []string{
		"http://127.0.0.1:9999/hooks/",
		"https://Example.COM/api",
		"http://whole-host.test",
	}}
	tests := []struct {
		url     string
		allowed bool
	}{
		{"http://127.0.0.1:9999/hooks/x", true},
		{"http://127.0.0.1:9999/hooks/a/b?q=1", true},
		{"http://127.0.0.1:9999/hooks", false}, // the prefix ends with '/'
		{"http://127.0.0.1:9999/hooksx", false},
		{"http://127.0.0.1:9998/hooks/x", false},
		{"https://127.0.0.1:9999/hooks/x", false},
		{"http://127.0.0.1:9999/hooks/../admin", false},
		{"http://127.0.0.1:9999/hooks/%2e%2e/admin", false},
		{`http://127.0.0.1:9999/hooks/..\admin`, false},
		{`http://127.0.0.1:9999/hooks/..%5Cadmin`, false},
		{`http://127.0.0.1:9999/hooks/..%5cadmin`, false},
		{`http://127.0.0.1:9999/hooks/x\y`, false},
		{"http://127.0.0.1:9999/hooks/..;/admin", false},
		{"http://127.0.0.1:9999/hooks/..%3B/admin", false},
		{"http://127.0.0.1:9999/hooks/%00", false},
		{"http://127.0.0.1:9999/hooks/..%2Fadmin", false},
		{"http://127.0.0.1:9999/hooks/a;b", true},
		{"https://example.com/api", true},
		{"https://example.com:443/api/v1", true},
		{"https://example.com/apis", false},
		{"https://example.com.evil.test/api", false},
		{"http://whole-host.test:80/anything", true},
		{"http://user:pw@whole-host.test/", false},
		{"/relative", false},
		{"::", false},
	}
	for _, tt := range tests {
		err := r.AllowsHTTP(tt.url)
		if (err == nil) != tt.allowed {
			t.Errorf("AllowsHTTP(%q) = %v, want allowed=%v", tt.url, err, tt.allowed)
		}
	}
	err := r.AllowsHTTP("http://other.test/")
	if want := `rule "h" may not call http://other.test/: add a prefix of it to spec.http`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestPermits(t *testing.T) {
	rs, err := Parse("r.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: notifier}
spec:
  watch: [{resource: configmaps}]
  permissions: [{resources: [configmaps], verbs: [patch, condition]}, {resources: [widgets.example.com], verbs: [condition]}]
  http: ["http://127.0.0.1:9999/hooks/"]
  script: "function onAdd() {}"
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs[0].Resolve(&fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	// The resolver does not describe widgets: Resolve cannot tell that
	// they lack a status subresource, Permits still can.
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	tests := []struct {
		name    string
		action  actions.Action
		wantErr string
	}{
		{"declared verb", actions.Action{Verb: actions.Patch, Resource: cm}, ""},
		{"undeclared verb", actions.Action{Verb: actions.Delete, Resource: cm}, `may not delete configmaps`},
		{"allowed URL", actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: "http://127.0.0.1:9999/hooks/x"}}, ""},
		{"other URL", actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: "http://127.0.0.1:9999/admin"}}, "spec.http"},
		{"no request", actions.Action{Verb: actions.HTTP}, "http action without a request"},
		{"condition through status", actions.Action{Verb: actions.SetCondition, Resource: widgets, Subresource: "status"}, ""},
		{"condition on the object, patch declared", actions.Action{Verb: actions.SetCondition, Resource: cm}, ""},
		{"condition on the object, patch not declared", actions.Action{Verb: actions.SetCondition, Resource: widgets},
			`widgets.example.com has no status subresource, so its conditions are written to the object itself: rule "notifier" may not patch widgets.example.com: add {resources: [widgets.example.com], verbs: [patch]} to spec.permissions`},
		{"condition not declared", actions.Action{Verb: actions.SetCondition, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: "status"}, `may not condition pods`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := res.Permits(tt.action)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Permits = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestPermissionNamespaces: a permission applies in the namespaces the rule
// watches unless it names its own; "*" is all namespaces; cluster-scoped
// resources have no namespace.
func TestPermissionNamespaces(t *testing.T) {
	r := mustParse(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: ns}
spec:
  watch:
    - resource: configmaps
      namespaces: [a]
    - resource: secrets
      namespaces: [b, a]
    - resource: nodes
  permissions:
    - resources: [configmaps]
      verbs: [patch, event]
    - resources: [secrets]
      verbs: [create]
      namespaces: [c]
    - resources: [secrets]
      verbs: [create, delete]
      namespaces: [d, c]
    - resources: [deployments.apps]
      verbs: [patch]
      namespaces: ["*"]
    - resources: [nodes]
      verbs: [patch]
  script: x
`)
	res, err := r.Resolve(&fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	tests := []struct {
		verb    actions.Verb
		gvr     schema.GroupVersionResource
		ns      string
		allowed bool
	}{
		{actions.Patch, cm, "a", true},
		{actions.Patch, cm, "b", true}, // b is watched too (secrets)
		{actions.Patch, cm, "kube-system", false},
		{actions.Patch, cm, "", false},
		{actions.Event, cm, "a", true},
		{actions.Event, cm, "kube-system", false},
		{actions.Create, secrets, "c", true},
		{actions.Create, secrets, "d", true},
		{actions.Create, secrets, "a", false}, // named namespaces replace the watched ones
		{actions.Delete, secrets, "d", true},
		{actions.Delete, secrets, "c", true},
		{actions.Patch, deploy, "kube-system", true},
		{actions.Patch, nodes, "", true},
	}
	for _, tt := range tests {
		if err := res.Allows(tt.verb, tt.gvr, tt.ns); (err == nil) != tt.allowed {
			t.Errorf("Allows(%s, %s, %q) = %v, want allowed=%v", tt.verb, tt.gvr.Resource, tt.ns, err, tt.allowed)
		}
	}
	if got := res.WatchedNamespaces(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("WatchedNamespaces = %v, want [a b]", got)
	}

	// A rule that watches all namespaces may act in all of them.
	all := mustParse(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: all}
spec:
  watch: [{resource: configmaps, namespaces: [a]}, {resource: secrets}]
  permissions: [{resources: [configmaps], verbs: [patch]}]
  script: x
`)
	res, err = all.Resolve(&fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Allows(actions.Patch, cm, "kube-system"); err != nil {
		t.Errorf("a rule watching secrets everywhere: %v", err)
	}
}

func TestPermissionNamespacesErrors(t *testing.T) {
	_, err := Parse("r.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: bad}
spec:
  watch: [{resource: configmaps}]
  permissions:
    - {resources: [configmaps], verbs: [patch], namespaces: []}
    - {resources: [configmaps], verbs: [patch], namespaces: ["*", a]}
    - {resources: [configmaps], verbs: [patch], namespaces: [Not_A_Namespace]}
  script: x
`))
	want := `r.yaml:7:61: spec.permissions[0].namespaces: must not be empty: leave it out for the namespaces the rule watches, or write ["*"] for all
r.yaml:8:62: spec.permissions[1].namespaces[0]: "*" (all namespaces) must be the only entry
r.yaml:9:62: spec.permissions[2].namespaces[0]: invalid namespace "Not_A_Namespace"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Parse errors:\n%v\nwant:\n%s", err, want)
	}

	r := mustParse(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: bad}
spec:
  watch: [{resource: configmaps}]
  permissions:
    - resources: [nodes]
      verbs: [patch]
      namespaces: [a]
  script: x
`)
	_, err = r.Resolve(&fakeResolver{})
	if want := `r.yaml:9:19: spec.permissions[0].namespaces: nodes is cluster-scoped; give it a permission entry without namespaces`; err == nil || err.Error() != want {
		t.Errorf("Resolve error:\n%v\nwant:\n%s", err, want)
	}
}

// A condition on a resource without a status subresource is written to
// the object itself, so Resolve requires patch wherever condition
// applies, at the first reference that grants condition; a resource with
// a status subresource, or one the resolver does not describe, needs
// none.
func TestResolveConditionNeedsPatch(t *testing.T) {
	tests := []struct {
		name        string
		permissions string
		want        string
	}{
		{name: "through status", permissions: `[{resources: [deployments], verbs: [condition]}]`},
		{name: "not described", permissions: `[{resources: [widgets.example.com], verbs: [condition]}]`},
		{name: "patch beside it", permissions: `[{resources: [cm], verbs: [condition, patch]}]`},
		{name: "patch in another entry", permissions: `[{resources: [cm], verbs: [condition], namespaces: [a]}, {resources: [configmaps], verbs: [patch]}]`},
		{
			name:        "no patch",
			permissions: `[{resources: [secrets], verbs: [event]}, {resources: [cm, secrets], verbs: [condition]}]`,
			want: "r.yaml:6:70: spec.permissions[1].resources[0]: configmaps has no status subresource, so its conditions are written to the object itself, which takes patch too: add {resources: [configmaps], verbs: [patch]} to spec.permissions\n" +
				"r.yaml:6:74: spec.permissions[1].resources[1]: secrets has no status subresource, so its conditions are written to the object itself, which takes patch too: add {resources: [secrets], verbs: [patch]} to spec.permissions",
		},
		{
			name:        "patch in fewer namespaces",
			permissions: `[{resources: [cm], verbs: [condition], namespaces: [a, b, c]}, {resources: [cm], verbs: [patch], namespaces: [b]}]`,
			want:        "r.yaml:6:30: spec.permissions[0].resources[0]: configmaps has no status subresource, so its conditions are written to the object itself, which takes patch in namespaces a, c too, where condition applies",
		},
		{
			name:        "patch not in all namespaces",
			permissions: `[{resources: [cm], verbs: [condition], namespaces: ["*"]}, {resources: [cm], verbs: [patch], namespaces: [b]}]`,
			want:        "r.yaml:6:30: spec.permissions[0].resources[0]: configmaps has no status subresource, so its conditions are written to the object itself, which takes patch in all namespaces, where condition applies, not only in b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: ready}\nspec:\n  watch: [{resource: deployments}]\n  permissions: "+
				tt.permissions+"\n  script: 'function onAdd() {}'\n")
			_, err := r.Resolve(&fakeResolver{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Resolve:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
