package validate

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// brokenTeamRule is a team's Rule as kubectl get prints it, whose script
// does not parse and whose spec.watch names a resource no cluster serves,
// and which reaches another namespace.
const brokenTeamRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: broken
  namespace: team-a
  uid: 0b5c9c55-3f0e-4a55-9a39-7f1c1c9d2b4e
  resourceVersion: "17"
  managedFields:
  - manager: kubectl
    operation: Update
    time: "2026-11-29T07:55:33Z"
spec:
  watch:
  - resource: confgimaps
  permissions:
  - resources: [configmaps]
    verbs: [patch]
    namespaces: [team-b]
  script: |
    function onAdd(obj) {
      kreact.log("added" obj.metadata.name);
    }
status:
  conditions: []
`

const goodClusterRule = `apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata:
  name: good
spec:
  watch:
  - resource: configmaps
  events: [add]
  script: |
    function onAdd(obj) {}
`

// wantBroken are brokenTeamRule's problems, as validate prints them.
var wantBroken = []string{
	`rule/team-a/broken: spec.permissions[0].namespaces: "team-b" is outside namespace team-a: a Rule acts in its own namespace only`,
	`rule/team-a/broken: spec.script:2:22: rule "team-a.broken": script: Unexpected identifier`,
	`rule/team-a/broken: spec.script:2:39: `,
}

// TestCheckReadsAManifestOfRuleObjects: kreact validate (and every
// command that reads rules with Check) takes a manifest of rule objects,
// as kubectl get prints a List of them, and reports each problem at the
// object, its field and its script's position.
func TestCheckReadsAManifestOfRuleObjects(t *testing.T) {
	dir := t.TempDir()
	list := "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n" + indentItem(brokenTeamRule) + indentItem(goodClusterRule)
	file := write(t, dir, "rules.yaml", list)
	res, err := Check(t.Context(), []string{file}, builtinMapper(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Problems.Errors()
	if len(got) != len(wantBroken) {
		t.Fatalf("problems:\n%v\nwant %d:\n%s", res.Problems, len(wantBroken), strings.Join(wantBroken, "\n"))
	}
	for i, want := range wantBroken {
		if !strings.HasPrefix(got[i].Error(), want) {
			t.Errorf("problem %d: %s\nwant it to start with %s", i, got[i], want)
		}
	}
	if len(res.Valid) != 1 || res.Valid[0].Name != "good" {
		t.Errorf("valid %v, want the ClusterRule", res.Valid)
	}
	if len(res.Failed) != 1 || res.Failed[0] != file {
		t.Errorf("failed %v, want the manifest", res.Failed)
	}
	if line, ok := res.Summary(); ok || line != "validate: 3 errors, 0 warnings in 1 file" {
		t.Errorf("summary %q", line)
	}
}

// TestCheckObject: one object is checked as a manifest holding it alone
// is, with the resources of the mapper; an unknown resource is an error
// once the format is right.
func TestCheckObject(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"broken", brokenTeamRule, wantBroken},
		{"an unknown resource", strings.Replace(brokenTeamRule, "    namespaces: [team-b]\n", "", 1), []string{
			`rule/team-a/broken: spec.watch[0].resource: "confgimaps": no such resource; did you mean "configmaps"?`,
			`rule/team-a/broken: spec.script:2:22: rule "team-a.broken": script: Unexpected identifier`,
			`rule/team-a/broken: spec.script:2:39: `,
		}},
		{"good", goodClusterRule, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var content map[string]any
			if err := yaml.Unmarshal([]byte(tc.src), &content); err != nil {
				t.Fatal(err)
			}
			res, err := CheckObject(t.Context(), content, builtinMapper(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Problems.Errors()
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%v\nwant %d:\n%s", res.Problems, len(tc.want), strings.Join(tc.want, "\n"))
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i].Error(), want) {
					t.Errorf("problem %d: %s\nwant it to start with %s", i, got[i], want)
				}
			}
			if len(tc.want) == 0 && len(res.Resolved) != 1 {
				t.Errorf("resolved %v, want the rule", res.Resolved)
			}
		})
	}
}

// indentItem makes a YAML document an item of a List's items.
func indentItem(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "- " + l
		} else {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
