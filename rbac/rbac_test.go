package rbac

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
)

func TestSubresourcesOf(t *testing.T) {
	both := func(subs ...string) map[actions.Verb][]string {
		return map[actions.Verb][]string{actions.Apply: subs, actions.Patch: subs}
	}
	for _, c := range []struct {
		name, script string
		want         map[actions.Verb][]string
	}{
		{"none", `kreact.patch(obj, {})`, map[actions.Verb][]string{}},
		{"status literal in a patch", `kreact.patch(obj, p, {subresource: "status"})`, map[actions.Verb][]string{actions.Patch: {"status"}}},
		{"status literal in a jsonPatch", `kreact.jsonPatch(obj, [{op: "add", path: "/status/x", value: f(1)}], {subresource: "status"})`, map[actions.Verb][]string{actions.Patch: {"status"}}},
		{"each call its verb", "kreact.apply(o, {subresource: 'scale'}); kreact.patch(o, p, {subresource: `status`}); kreact.patch(o, p, {subresource: \"status\"})",
			map[actions.Verb][]string{actions.Apply: {"scale"}, actions.Patch: {"status"}}},
		{"apply without, patch with", `kreact.apply({kind: "ConfigMap"}); kreact.patch(b, {status: {at: now()}}, {subresource: "status"})`, map[actions.Verb][]string{actions.Patch: {"status"}}},
		{"options built apart: both", `const opts = {subresource: "status"}; kreact.patch(o, p, opts)`, both("status")},
		{"no literal it supports: every one", `kreact.patch(obj, p, {subresource: "eviction"})`, both("scale", "status")},
		{"built at run time", `kreact.patch(obj, p, {subresource: which})`, both("scale", "status")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := subresourcesOf(c.script); !maps.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("subresourcesOf = %v, want %v", got, c.want)
			}
		})
	}
}

// A rule that applies one resource and patches another's status gets
// patch on the status of the patched resource only, and the output
// starts with the Namespace, so that kubectl apply can create the rest.
func TestGenerateStatusOnlyWherePatched(t *testing.T) {
	rs, resolved := resolve(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: mixed
spec:
  watch:
    - resource: configmaps
  permissions:
    - resources: [secrets]
      verbs: [apply]
    - resources: [deployments]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.apply({apiVersion: "v1", kind: "Secret", metadata: {name: obj.metadata.name, namespace: obj.metadata.namespace}});
      kreact.patch({resource: "deployments", namespace: "x", name: "y"}, {status: {seen: true}}, {subresource: "status"});
    }
`)
	out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "resources: [deployments/status]") {
		t.Errorf("no patch on deployments/status:\n%s", out)
	}
	if strings.Contains(string(out), "secrets/status") {
		t.Errorf("patch on secrets/status, which the rule only applies:\n%s", out)
	}
	if first := documents(out)[0]; !strings.Contains(first, "\nkind: Namespace\nmetadata:\n  name: ops\n") {
		t.Errorf("the first document is not the Namespace ops:\n%s", first)
	}
}

const namespacedRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: labeller
spec:
  watch:
    - resource: configmaps
      namespaces: [team-a]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
    - resources: [secrets]
      verbs: [delete]
      namespaces: ["*"]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {seen: "yes"}}}, {subresource: "status"});
    }
`

// resolve parses rule YAML and resolves it against the built-in resources.
func resolve(t *testing.T, yaml string) ([]*rules.Rule, []*rules.Resolved) {
	t.Helper()
	rs, err := rules.Parse("rules.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	var resolved []*rules.Resolved
	for _, r := range rs {
		res, err := r.Resolve(mapper)
		if err != nil {
			t.Fatal(err)
		}
		resolved = append(resolved, res)
	}
	return rs, resolved
}

// documents splits YAML output into its documents.
func documents(out []byte) []string { return strings.Split(string(out), "---\n") }

// clusterRoleAndRole returns the ClusterRole and the Role of the RBAC of
// rule, a rule that watches one namespace.
func clusterRoleAndRole(t *testing.T, rule string) (cluster, role string) {
	t.Helper()
	rs, resolved := resolve(t, rule)
	out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "kreact-system"})
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(out)
	return docs[2], docs[4]
}

func TestGenerateNamespacedRule(t *testing.T) {
	rs, resolved := resolve(t, namespacedRule)
	out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "kreact-system"})
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(out)
	kinds := []string{}
	for _, d := range docs {
		for _, line := range strings.Split(d, "\n") {
			if k, ok := strings.CutPrefix(line, "kind: "); ok {
				kinds = append(kinds, k)
			}
		}
	}
	if want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v\n%s", kinds, want, out)
	}
	cluster, role := docs[2], docs[4]
	for _, want := range []string{"customresourcedefinitions", "apiservices", "resources: [secrets]"} {
		if !strings.Contains(cluster, want) {
			t.Errorf("the ClusterRole lacks %q:\n%s", want, cluster)
		}
	}
	for _, want := range []string{"namespace: team-a", "resources: [configmaps]", "verbs: [get, list, watch, patch]", "resources: [configmaps/status]", "# rule labeller ("} {
		if !strings.Contains(role, want) {
			t.Errorf("the Role lacks %q:\n%s", want, role)
		}
	}
	if strings.Contains(cluster, "resources: [configmaps]") {
		t.Errorf("configmaps granted cluster-wide although the rule watches team-a only:\n%s", cluster)
	}
	if strings.Contains(string(out), "leases") {
		t.Error("leases granted without LeaderElect or Shards")
	}
}

func TestGenerateLeaseRoles(t *testing.T) {
	rs, resolved := resolve(t, namespacedRule)
	for _, c := range []struct {
		name  string
		opts  Options
		role  string
		verbs string
	}{
		{"leader election", Options{Name: "k", Namespace: "ops", LeaderElect: true}, "name: k-leader-election", "verbs: [get, create, update]"},
		{"shards", Options{Name: "k", Namespace: "ops", Shards: true}, "name: k-shards", "verbs: [get, list, create, update, delete]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Generate(rs, resolved, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, d := range documents(out) {
				if strings.Contains(d, "\nkind: Role\n") && strings.Contains(d, c.role) {
					found = true
					if !strings.Contains(d, "namespace: ops") || !strings.Contains(d, "resources: [leases]") || !strings.Contains(d, c.verbs) {
						t.Errorf("lease role:\n%s", d)
					}
				}
			}
			if !found {
				t.Errorf("no Role %s:\n%s", c.role, out)
			}
		})
	}
}

// Each rule that watches some namespaces gets its warning; one that
// watches every namespace gets none.
func TestWideActions(t *testing.T) {
	wide := strings.NewReplacer("name: labeller", "name: everywhere", "      namespaces: [team-a]\n", "").Replace(namespacedRule)
	second := strings.Replace(namespacedRule, "name: labeller", "name: second", 1)
	_, resolved := resolve(t, namespacedRule+"---\n"+wide+"---\n"+second)
	got := WideActions(resolved...)
	if len(got) != 2 || !strings.Contains(got[0], "rule=labeller") || !strings.Contains(got[0], "delete secrets in all namespaces") || !strings.Contains(got[1], "rule=second") {
		t.Errorf("WideActions = %q, want a warning about deleting secrets everywhere for labeller and second", got)
	}
}

// spec.recordEvents: kreact records Events where the rule watches, so it
// may create events there, and nowhere else.
func TestGenerateRecordEvents(t *testing.T) {
	rule := strings.Replace(namespacedRule, "  script: |", "  recordEvents: true\n  script: |", 1)
	for _, tt := range []struct {
		rule string
		want bool
	}{{namespacedRule, false}, {rule, true}} {
		cluster, role := clusterRoleAndRole(t, tt.rule)
		if got := strings.Contains(role, "resources: [events]"); got != tt.want {
			t.Errorf("recordEvents %v: the Role grants events: %v\n%s", tt.want, got, role)
		}
		if strings.Contains(cluster, "resources: [events]") {
			t.Errorf("events granted cluster-wide although the rule watches team-a only:\n%s", cluster)
		}
	}
}

// A rule that sets conditions gets exactly get and patch on the status
// subresource of a resource that has one, and nothing on the resource
// itself; on a resource without one (configmaps), get and patch on the
// resource itself, and nothing on a configmaps/status that does not exist.
func TestGenerateConditionGrants(t *testing.T) {
	for _, tt := range []struct {
		resource, verbs string
		want, notWant   string
	}{
		{"deployments", "[condition]",
			"# rule ready (condition)\n  - apiGroups: [apps]\n    resources: [deployments/status]\n    verbs: [get, patch]\n",
			"resources: [deployments]\n"},
		{"configmaps", "[condition, patch]",
			"# rule ready (condition, patch)\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n    verbs: [get, patch]\n",
			"configmaps/status"},
	} {
		t.Run(tt.resource, func(t *testing.T) {
			rs, resolved := resolve(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ready
spec:
  watch:
    - resource: secrets
  permissions:
    - resources: [`+tt.resource+`]
      verbs: `+tt.verbs+`
  script: |
    function onAdd(obj, ctx) {
      kreact.setCondition({resource: "`+tt.resource+`", namespace: "x", name: "y"}, {type: "Ready", status: "True"});
    }
`)
			out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "ops"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("want\n%s\nin\n%s", tt.want, out)
			}
			if strings.Contains(string(out), tt.notWant) {
				t.Errorf("%q in\n%s", tt.notWant, out)
			}
		})
	}
}

func TestSetsOwner(t *testing.T) {
	for _, c := range []struct {
		script string
		want   bool
	}{
		{`kreact.create(child, {owner: obj})`, true},
		{`const owner = obj; kreact.apply(child, {subresource: "status", owner})`, true},
		{`opts.owner = obj`, true},
		{`opts["owner"] = obj`, true},
		{`const o = kreact.owner(obj); kreact.owner (o)`, false},
		{`if (!req.object?.metadata.labels?.owner) return "needs an owner label"`, false},
		{`if (obj.metadata.labels.owner === "a") return`, false},
		{`kreact.patch(obj, {spec: {owners: 1}})`, false},
	} {
		if got := setsOwner(c.script); got != c.want {
			t.Errorf("setsOwner(%q) = %v, want %v", c.script, got, c.want)
		}
	}
}

// A rule whose script sets owner references may update the finalizers of
// what it reads, where it reads it (OwnerReferencesPermissionEnforcement
// checks that for blockOwnerDeletion); a rule that does not, may not.
func TestGenerateOwnerGrantsFinalizers(t *testing.T) {
	owning := strings.Replace(namespacedRule, "  script: |\n", "  script: |\n    // kreact.create(child, {owner: obj})\n", 1)
	for _, tt := range []struct {
		rule string
		want bool
	}{{namespacedRule, false}, {owning, true}} {
		cluster, role := clusterRoleAndRole(t, tt.rule)
		if got := strings.Contains(role, "resources: [configmaps/finalizers]\n    verbs: [update]"); got != tt.want {
			t.Errorf("owner %v: the Role grants update on configmaps/finalizers: %v\n%s", tt.want, got, role)
		}
		if strings.Contains(cluster, "finalizers") {
			t.Errorf("finalizers granted cluster-wide although the rule watches team-a only:\n%s", cluster)
		}
	}
}

// A rule with admission handlers only is granted no read of what it
// watches: kreact run starts no informer for it (delivery.NeedsWatch).
func TestGenerateAdmissionOnlyRuleReadsNothing(t *testing.T) {
	rs, resolved := resolve(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: guard
spec:
  watch:
    - resource: deployments
  timeout: 300ms
  script: |
    function onValidate(req, ctx) {}
`)
	out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "ops", Admission: []string{"guard"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "resources: [deployments]") {
		t.Errorf("deployments granted to an admission-only rule:\n%s", out)
	}
	if !strings.Contains(string(out), "validatingwebhookconfigurations") {
		t.Errorf("no grant of the webhook configurations:\n%s", out)
	}
}

// kreact impersonates a team's Rule's ServiceAccount: a rule set with one
// grants impersonate on serviceaccounts, cluster-wide, as does
// Options.RuleObjects; an administrator's rules alone do not.
func TestGenerateImpersonate(t *testing.T) {
	const grant = "resources: [serviceaccounts]\n    verbs: [impersonate]"
	for _, tt := range []struct {
		name       string
		team, flag bool
		want       bool
	}{{"rule files", false, false, false}, {"--rule-objects", false, true, true}, {"a team's Rule", true, false, true}} {
		rs, resolved := resolve(t, namespacedRule)
		if tt.team {
			rs[0].Namespace = "team-a"
		}
		out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "kreact-system", RuleObjects: tt.flag})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(documents(out)[2], grant); got != tt.want {
			t.Errorf("%s: the ClusterRole grants impersonate: %v, want %v\n%s", tt.name, got, tt.want, out)
		}
	}
}

// TestGenerateTeamRuleGrantsKreactItsReadsOnly: kreact reads for a team's
// Rule through its own informers, and releases its finalizers; its
// actions, Events and owner references are its ServiceAccount's, which
// the namespace grants, so kreact is granted none of them.
func TestGenerateTeamRuleGrantsKreactItsReadsOnly(t *testing.T) {
	rs, resolved := resolve(t, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: labeller, namespace: shop}
spec:
  watch: [{resource: configmaps}]
  finalizer: true
  recordEvents: true
  permissions: [{resources: [configmaps], verbs: [patch, create]}]
  script: |
    function onAdd(obj) {}
    function onDelete(obj) {}
`)
	out, err := Generate(rs, resolved, Options{Name: "kreact", Namespace: "kreact-system"})
	if err != nil {
		t.Fatal(err)
	}
	var role string
	for _, d := range documents(out) {
		if strings.Contains(d, "kind: Role\nmetadata:") && strings.Contains(d, "namespace: shop") {
			role = d
		}
	}
	if !strings.Contains(role, "resources: [configmaps]\n    verbs: [get, list, watch, patch]") {
		t.Errorf("the Role in shop does not grant the reads and the finalizer's patch:\n%s", out)
	}
	if strings.Contains(role, "create") || strings.Contains(role, "events") {
		t.Errorf("kreact is granted what the team's ServiceAccount does (create, events):\n%s", role)
	}
}

// TestWrite: kreact rbac prints the warnings of WideActions on stderr and
// what Generate makes on stdout.
func TestWrite(t *testing.T) {
	wide := strings.NewReplacer("name: labeller", "name: everywhere", "      namespaces: [team-a]\n", "").Replace(namespacedRule)
	rs, resolved := resolve(t, namespacedRule+"---\n"+wide)
	opts := Options{Name: "kreact", Namespace: "kreact-system"}
	want, err := Generate(rs, resolved, opts)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if err := Write(&stdout, &stderr, rs, resolved, opts); err != nil {
		t.Fatal(err)
	}
	if wantErr := strings.Join(WideActions(resolved...), "\n") + "\n"; stdout.String() != string(want) || stderr.String() != wantErr {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", stdout.String(), stderr.String(), wantErr)
	}
}
