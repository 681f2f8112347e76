//go:build e2e

package deploy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestRuleCRDsCheckRuleObjects: the CRDs generated from the rule schema
// (deploy/crds) install on the API server, take every example rule as a
// Rule in a namespace and as a ClusterRule, and refuse, with the field's
// path, what the schema refuses, with kreact nowhere running.
func TestRuleCRDsCheckRuleObjects(t *testing.T) {
	// --force-conflicts: another test may have installed them with helm.
	mustKubectl(t, "apply", "--server-side", "--force-conflicts", "-f", "crds/")
	mustKubectl(t, "wait", "--for", "condition=Established", "crd/rules.kreact.dev", "crd/clusterrules.kreact.dev")
	mustKubectl(t, "create", "namespace", "crd-rules")

	examples, _ := filepath.Glob("../examples/*.yaml")
	examples = append(examples, "rules/namespace-labels.yaml")
	n := 0
	for _, file := range examples {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range parseObjects(t, string(data)) {
			if doc.kind() != "Rule" {
				continue // the CRDs the examples use
			}
			for _, kind := range []string{"Rule", "ClusterRule"} {
				n++
				apply(t, ruleObject(t, doc, kind), "")
			}
		}
	}
	if n == 0 {
		t.Fatal("no example rule found")
	}

	for _, tc := range []struct{ name, spec, want string }{
		{"no watch", `script: "function onAdd() {}"`, `spec.watch: Required value`},
		{"unknown field", "watch: [{resource: configmaps}]\nscript: x\nworker: 2", `unknown field "spec.worker"`},
		{"workers out of range", "watch: [{resource: configmaps}]\nscript: x\nworkers: 0", `spec.workers: Invalid value: 0: spec.workers in body should be greater than or equal to 1`},
		{"unknown verb", "watch: [{resource: configmaps}]\nscript: x\npermissions: [{resources: [configmaps], verbs: [explode]}]", `spec.permissions[0].verbs[0]: Unsupported value: "explode"`},
		{"script and scriptFile", "watch: [{resource: configmaps}]\nscript: x\nscriptFile: a.js", `spec: Invalid value: exactly one of script and scriptFile`},
		{"neither script nor scriptFile", "watch: [{resource: configmaps}]", `exactly one of script and scriptFile`},
		{"duplicate event", "watch: [{resource: configmaps}]\nscript: x\nevents: [add, add]", `spec.events[1]: Duplicate value: "add"`},
		{"star in a name", "watch: [{resource: configmaps}]\nscript: x\npermissions: [{resources: [configmaps], verbs: [patch], namespaces: ['a*']}]", `spec.permissions[0].namespaces[0]: Invalid value: "a*"`},
		{"bad namespace", "watch: [{resource: configmaps, namespaces: [Not_A_Name]}]\nscript: x", `spec.watch[0].namespaces[0]: Invalid value: "Not_A_Name"`},
		{"bad duration", "watch: [{resource: configmaps}]\nscript: x\ntimeout: soon", `spec.timeout: Invalid value: "soon"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec map[string]any
			if err := yaml.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			doc := object{"apiVersion": "kreact.dev/v1alpha1", "kind": "Rule", "metadata": map[string]any{"name": "bad"}, "spec": spec}
			apply(t, ruleObject(t, doc, "Rule"), tc.want)
		})
	}
}

// ruleObject turns a rule file's document into a rule object of kind.
func ruleObject(t *testing.T, doc object, kind string) string {
	t.Helper()
	meta := map[string]any{"name": doc.name()}
	if kind == "Rule" {
		meta["namespace"] = "crd-rules"
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": doc["apiVersion"], "kind": kind, "metadata": meta, "spec": doc["spec"]})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// apply applies obj with a server-side dry run: accepted when want is
// empty, else refused with want in kubectl's error.
func apply(t *testing.T, obj, want string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "rule.yaml")
	if err := os.WriteFile(file, []byte(obj), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := kubectl(t, "apply", "--dry-run=server", "-f", file)
	switch {
	case want == "" && err != nil:
		t.Errorf("refused:\n%s\n%s", obj, out)
	case want != "" && err == nil:
		t.Errorf("accepted, want %q:\n%s", want, obj)
	case want != "" && !strings.Contains(out, want):
		t.Errorf("refused with\n%s\nwant %q", out, want)
	}
}
