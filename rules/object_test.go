package rules

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// object decodes a rule object written as YAML into the content an
// unstructured.Unstructured holds.
func object(t *testing.T, src string) map[string]any {
	t.Helper()
	var content map[string]any
	if err := yaml.Unmarshal([]byte(src), &content); err != nil {
		t.Fatal(err)
	}
	return content
}

const teamRule = `
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: restart
  namespace: team-a
  annotations: {kreact.dev/description: restarts on config change}
spec:
  watch: [{resource: configmaps}]
  permissions: [{resources: [deployments.apps], verbs: [patch]}]
  script: |
    function onAdd(obj) {}
`

func TestParseObjectNamesATeamsRuleByItsNamespace(t *testing.T) {
	r, err := ParseObject(object(t, teamRule))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "team-a.restart" || r.Namespace != "team-a" || r.Source != "rule/team-a/restart" {
		t.Errorf("name %q, namespace %q, source %q; want team-a.restart, team-a, rule/team-a/restart", r.Name, r.Namespace, r.Source)
	}
	if r.Description != "restarts on config change" {
		t.Errorf("description %q, want the annotation's", r.Description)
	}
	if !slices.Equal(r.Watch[0].Namespaces, []string{"team-a"}) {
		t.Errorf("watch namespaces %v, want the Rule's own", r.Watch[0].Namespaces)
	}
	if got := r.ScriptPosition(12, 5).String(); got != "rule/team-a/restart: spec.script:12:5" {
		t.Errorf("a script position reads %q, want it within spec.script", got)
	}
	// Defaults as for a file.
	if r.Workers != DefaultWorkers || r.Timeout != DefaultTimeout {
		t.Errorf("workers %d, timeout %v: want the defaults", r.Workers, r.Timeout)
	}
}

func TestParseObjectNamesAClusterRuleAsAFile(t *testing.T) {
	src := strings.NewReplacer("kind: Rule", "kind: ClusterRule", "  namespace: team-a\n", "").Replace(teamRule)
	r, err := ParseObject(object(t, src))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "restart" || r.Namespace != "" || r.Source != "clusterrule/restart" {
		t.Errorf("name %q, namespace %q, source %q; want restart, none, clusterrule/restart", r.Name, r.Namespace, r.Source)
	}
	if len(r.Watch[0].Namespaces) != 0 {
		t.Errorf("a ClusterRule's watch got namespaces %v, want all", r.Watch[0].Namespaces)
	}
}

func TestParseObjectReportsAtTheObject(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"a bad field", "  script: |", "  workers: 1000\n  script: |",
			[]string{"rule/team-a/restart: spec.workers: "}},
		{"a script file", "  script: |\n    function onAdd(obj) {}\n", "  scriptFile: ../../etc/passwd\n",
			[]string{"rule/team-a/restart: spec.scriptFile: a rule object carries its script in spec.script"}},
		{"another namespace", "[{resource: configmaps}]", "[{resource: configmaps, namespaces: [team-a, team-b]}]",
			[]string{`rule/team-a/restart: spec.watch[0].namespaces: "team-b" is outside namespace team-a`}},
		{"all namespaces", "verbs: [patch]}", `verbs: [patch], namespaces: ["*"]}`,
			[]string{`rule/team-a/restart: spec.permissions[0].namespaces: "*" (all namespaces) is outside namespace team-a`}},
		{"a name that is no label", "name: restart", "name: re.start",
			[]string{"rule/team-a/re.start: metadata.name: invalid name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(teamRule, tc.from, tc.to, 1)
			_, err := ParseObject(object(t, src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "restart:1") || strings.Contains(err.Error(), "restart:2") {
				t.Errorf("error %v gives a line of a rendering the user never saw", err)
			}
		})
	}
}

func TestParseObjectRefusesWhatIsNoRuleObject(t *testing.T) {
	for _, src := range []string{
		strings.Replace(teamRule, "kind: Rule", "kind: ConfigMap", 1),
		strings.Replace(teamRule, "  namespace: team-a\n", "", 1),
		strings.Replace(strings.Replace(teamRule, "kind: Rule", "kind: ClusterRule", 1), "namespace: team-a", "namespace: x", 1),
	} {
		if _, err := ParseObject(object(t, src)); err == nil {
			t.Errorf("no error for\n%s", src)
		}
	}
}

func TestResolveKeepsATeamsRuleOffClusterScopedResources(t *testing.T) {
	src := strings.Replace(teamRule, "[{resource: configmaps}]", "[{resource: configmaps}, {resource: nodes}]", 1)
	src = strings.Replace(src, "  script: |", "  reads: [nodes]\n  script: |", 1)
	r, err := ParseObject(object(t, src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Resolve(&fakeResolver{})
	if err == nil {
		t.Fatal("a Rule watching nodes resolved")
	}
	for _, w := range []string{
		"spec.watch[1].resource: nodes is cluster-scoped, out of reach of a Rule in namespace team-a",
		"spec.reads[0]: nodes is cluster-scoped",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\nwant it to contain %q", err, w)
		}
	}
	// The same as a ClusterRule resolves.
	cluster := strings.NewReplacer("kind: Rule", "kind: ClusterRule", "  namespace: team-a\n", "").Replace(src)
	r, err = ParseObject(object(t, cluster))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(&fakeResolver{}); err != nil {
		t.Errorf("the ClusterRule: %v", err)
	}
}
