package rbac

import (
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
)

func TestSubresourcesOf(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         []string
	}{
		{"none", `kreact.patch(obj, {})`, nil},
		{"status literal", `kreact.patch(obj, p, {subresource: "status"})`, []string{"status"}},
		{"both, once each", "kreact.apply(o, {subresource: 'scale'}); kreact.patch(o, p, {subresource: `status`}); kreact.patch(o, p, {subresource: \"status\"})", []string{"scale", "status"}},
		{"no literal it supports: every one", `kreact.patch(obj, p, {subresource: "eviction"})`, []string{"scale", "status"}},
		{"built at run time", `kreact.patch(obj, p, {subresource: which})`, []string{"scale", "status"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := subresourcesOf(c.script); !slices.Equal(got, c.want) {
				t.Errorf("subresourcesOf = %v, want %v", got, c.want)
			}
		})
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
	if want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v\n%s", kinds, want, out)
	}
	cluster, role := docs[1], docs[3]
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

func TestWideActions(t *testing.T) {
	_, resolved := resolve(t, namespacedRule)
	got := WideActions(resolved[0])
	if len(got) != 1 || !strings.Contains(got[0], "rule=labeller") || !strings.Contains(got[0], "delete secrets in all namespaces") {
		t.Errorf("WideActions = %q, want one warning about deleting secrets everywhere", got)
	}
}
