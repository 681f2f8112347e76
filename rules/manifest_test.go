package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
)

// kubectlList is what `kubectl get rules,clusterrules -A -o yaml` prints:
// a List of a team's Rule and a ClusterRule, with what the API server
// adds (status, uid, resourceVersion, managedFields, timestamps).
const kubectlList = `apiVersion: v1
items:
- apiVersion: kreact.dev/v1alpha1
  kind: Rule
  metadata:
    annotations:
      kreact.dev/description: restarts on config change
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"kreact.dev/v1alpha1","kind":"Rule"}
    creationTimestamp: "2026-11-29T07:55:33Z"
    generation: 2
    managedFields:
    - apiVersion: kreact.dev/v1alpha1
      fieldsType: FieldsV1
      fieldsV1:
        f:spec:
          .: {}
          f:script: {}
      manager: kubectl-client-side-apply
      operation: Update
      time: "2026-11-29T07:55:33Z"
    name: restart
    namespace: team-a
    resourceVersion: "4711"
    uid: 0b5c9c55-3f0e-4a55-9a39-7f1c1c9d2b4e
  spec:
    watch:
    - resource: configmaps
    permissions:
    - resources: [deployments.apps]
      verbs: [patch]
    script: |
      function onAdd(obj) {}
  status:
    conditions:
    - type: Ready
      status: "True"
      observedGeneration: 2
      lastTransitionTime: "2026-11-29T07:55:34Z"
      reason: Running
      message: ""
- apiVersion: kreact.dev/v1alpha1
  kind: ClusterRule
  metadata:
    name: label-namespaces
    resourceVersion: "4712"
    uid: 5d1f7a3e-2b7e-4f0c-8f5e-1e2d3c4b5a69
  spec:
    watch:
    - resource: namespaces
    script: |
      function onAdd(obj) {}
kind: List
metadata:
  resourceVersion: ""
`

func TestParseReadsAKubectlList(t *testing.T) {
	rs, err := Parse("rules.yaml", []byte(kubectlList))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d rules, want the List's 2", len(rs))
	}
	team, cluster := rs[0], rs[1]
	if team.Name != "team-a.restart" || team.Namespace != "team-a" || !slices.Equal(team.Watch[0].Namespaces, []string{"team-a"}) {
		t.Errorf("the Rule: name %q, namespace %q, watch namespaces %v; want team-a.restart confined to team-a", team.Name, team.Namespace, team.Watch[0].Namespaces)
	}
	if team.Description != "restarts on config change" {
		t.Errorf("the Rule's description %q, want its annotation's", team.Description)
	}
	if cluster.Name != "label-namespaces" || cluster.Namespace != "" || len(cluster.Watch[0].Namespaces) != 0 {
		t.Errorf("the ClusterRule: name %q, namespace %q, watch namespaces %v; want label-namespaces over all namespaces", cluster.Name, cluster.Namespace, cluster.Watch[0].Namespaces)
	}
	for _, r := range rs {
		// The file holds them, for what follows files; positions are the
		// objects', as kreact run and its admission server report them.
		if r.Source != "rules.yaml" {
			t.Errorf("rule %s: Source %q, want the file", r.Name, r.Source)
		}
	}
	if got := team.ScriptPosition(1, 10).String(); got != "rule/team-a/restart: spec.script:1:10" {
		t.Errorf("a script position of the Rule reads %q", got)
	}
	// The same as the object parsed alone, as the cluster has it.
	one, err := ParseObject(object(t, teamRule))
	if err != nil {
		t.Fatal(err)
	}
	same := *team
	same.Source = one.Source
	if same.Fingerprint() != one.Fingerprint() {
		t.Errorf("the Rule of the List differs from the same object parsed by ParseObject:\n%+v\n%+v", team, one)
	}
}

func TestParseReadsRuleObjectsBesideRuleDocuments(t *testing.T) {
	src := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: from-file}
spec:
  watch: [{resource: pods}]
  script: "function onAdd() {}"
---
apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata: {name: admins}
spec:
  watch: [{resource: pods}]
  script: "function onAdd() {}"
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: teams, namespace: team-b}
spec:
  watch: [{resource: pods}]
  script: "function onAdd() {}"
`
	rs, err := Parse("mixed.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"from-file", "admins", "team-b.teams"}) {
		t.Fatalf("rules %v, want from-file, admins, team-b.teams", names)
	}
	// A rule file's document keeps its meaning: its positions are the
	// file's.
	if got := rs[0].Pos.String(); got != "mixed.yaml:3:18" {
		t.Errorf("the rule document's position %s, want mixed.yaml:3:18", got)
	}
	if got := rs[1].Pos.String(); got != "clusterrule/admins" {
		t.Errorf("the ClusterRule's position %s, want clusterrule/admins", got)
	}
}

func TestParseReportsRuleObjectsAtTheObject(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"a bad field of a team's Rule", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: r, namespace: team-a}
spec:
  watch: [{resource: pods, namespaces: [team-b]}]
  workers: 1000
  script: "function onAdd() {}"
`, []string{
			`rule/team-a/r: spec.watch[0].namespaces: "team-b" is outside namespace team-a: a Rule acts in its own namespace only (a ClusterRule may reach others)`,
			"rule/team-a/r: spec.workers: ",
		}},
		{"a List item of another kind", `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c, namespace: team-a}
`, []string{`l.yaml:4:3: items[0]: v1 ConfigMap is not a rule object (want apiVersion kreact.dev/v1alpha1, kind Rule or ClusterRule); every item of a List in a rules file must be a Rule or a ClusterRule`}},
		{"a Rule without a namespace in a List", `apiVersion: v1
kind: List
items:
- apiVersion: kreact.dev/v1alpha1
  kind: Rule
  metadata: {name: r}
  spec: {watch: [{resource: pods}], script: x}
`, []string{`l.yaml:4:3: items[0]: Rule r has no metadata.namespace`}},
		{"a ClusterRule of another version", `apiVersion: kreact.dev/v1
kind: ClusterRule
metadata: {name: r}
spec: {watch: [{resource: pods}], script: x}
`, []string{`l.yaml:1:1: kreact.dev/v1 ClusterRule is not a rule object`}},
		{"a scriptFile", `apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata: {name: r}
spec: {watch: [{resource: pods}], scriptFile: r.js}
`, []string{`clusterrule/r: spec.scriptFile: a rule object carries its script in spec.script`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("l.yaml", []byte(tc.src))
			list, ok := err.(diag.ErrorList)
			if !ok || len(list) != len(tc.want) {
				t.Fatalf("err = %v, want %d problems: %q", err, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if got := list[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("problem %d: %s\nwant it to start with %s", i, got, want)
				}
			}
		})
	}
}

// TestParseKeepsARuleFileDocument: a kind Rule without a namespace is a
// rule file's document, checked as strictly as ever: what only objects
// may carry (status, a uid) is an unknown field there.
func TestParseKeepsARuleFileDocument(t *testing.T) {
	src := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: r, uid: 5d1f7a3e}
spec:
  watch: [{resource: pods}]
  script: "function onAdd() {}"
status: {}
`
	_, err := Parse("r.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `r.yaml:3:21: unknown field "metadata.uid"`) || !strings.Contains(err.Error(), `r.yaml:7:1: unknown field "status"`) {
		t.Errorf("err = %v, want metadata.uid and status unknown, at their lines", err)
	}
}

// TestLoadAllChecksBrokenRuleObjects: a rule object with problems of
// format is returned with the broken rules, so that its script is
// checked too, and its file is failed.
func TestLoadAllChecksBrokenRuleObjects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "objects.yaml")
	src := strings.Replace(kubectlList, "    script: |\n      function onAdd(obj) {}\n  status:", "    workers: 0\n    script: |\n      function onAdd(obj) {}\n  status:", 1)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, broken, failed, err := LoadAll(file)
	if err == nil || !strings.Contains(err.Error(), "rule/team-a/restart: spec.workers: ") {
		t.Errorf("err = %v, want spec.workers at the Rule", err)
	}
	if len(rs) != 1 || rs[0].Name != "label-namespaces" {
		t.Errorf("rules %v, want label-namespaces", rs)
	}
	if len(broken) != 1 || broken[0].Name != "team-a.restart" || broken[0].ScriptPos.File != "rule/team-a/restart: spec.script" {
		t.Errorf("broken %v, want team-a.restart, with its script's position", broken)
	}
	if !slices.Equal(failed, []string{file}) {
		t.Errorf("failed %v, want [%s]", failed, file)
	}
}

// TestRuleObjectsHoldNoRenderedLines: the positions a rule object's rule
// holds name the object, never a line of the YAML that ParseObject
// renders, which no user sees; but its script's, which is within
// spec.script. An unknown resource found later is reported at the object.
func TestRuleObjectsHoldNoRenderedLines(t *testing.T) {
	data, err := os.ReadFile("testdata/valid/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(string(data), "kind: Rule", "kind: ClusterRule", 1), "  description: ", "  annotations:\n    kreact.dev/description: ", 1)
	r, err := ParseObject(object(t, src))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[diag.Position]() {
				if line := v.FieldByName("Line").Int(); line != 0 && path != "ScriptPos" {
					t.Errorf("%s is at line %d of a rendering", path, line)
				}
				return
			}
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(path+"["+strconv.Itoa(i)+"]", v.Index(i))
			}
		}
	}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		walk(v.Type().Field(i).Name, v.Field(i))
	}
	if len(r.Watch) == 0 || r.Watch[0].NamespacesPos.File != "clusterrule/restart-on-config-change" {
		t.Errorf("the watch's positions lost the object: %+v", r.Watch)
	}
}
