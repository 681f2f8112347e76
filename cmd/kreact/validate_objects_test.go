package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// teamRuleList is what `kubectl get rules -A -o yaml` prints of a team's
// Rule: it runs as team-a.labeller, confined to team-a.
const teamRuleList = `apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: kreact.dev/v1alpha1
  kind: Rule
  metadata:
    name: labeller
    namespace: team-a
    uid: 5d1f7a3e-2b7e-4f0c-8f5e-1e2d3c4b5a69
    resourceVersion: "17"
  spec:
    watch: [{resource: configmaps}]
    events: [add]
    permissions: [{resources: [configmaps], verbs: [patch]}]
    script: |
      function onAdd(obj) {
        kreact.patch(obj, {metadata: {labels: {seen: "yes"}}});
      }
  status: {conditions: []}
`

// TestTestReadsRuleObjects: kreact test runs the rules of a manifest of
// rule objects as kreact run would: a team's Rule sees its own namespace
// only.
func TestTestReadsRuleObjects(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(teamRuleList), 0o644); err != nil {
		t.Fatal(err)
	}
	test := `apiVersion: kreact.dev/v1alpha1
kind: RuleTest
spec:
  rules: [rules.yaml]
  cases:
    - name: a ConfigMap of the team is labelled, another namespace's is not seen
      events:
        - add: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: team-a}}
        - add: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: team-b}}
      expect:
        actions:
          - {verb: patch, resource: configmaps, namespace: team-a, name: a, patch: {metadata: {labels: {seen: "yes"}}}}
`
	if err := os.MkdirAll(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "labeller_test.yaml"), []byte(strings.Replace(test, "[rules.yaml]", "[../rules.yaml]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "test", filepath.Join(dir, "tests"))
	if code != exitOK || !strings.Contains(stdout, "--- PASS: ") {
		t.Errorf("kreact test of a manifest's Rule: %s", transcript(code, stdout, stderr))
	}
	code, stdout, stderr = run(t, "validate", "-f", filepath.Join(dir, "rules.yaml"))
	if code != exitOK || !strings.HasPrefix(stdout, "ok: 1 rule in 1 file") {
		t.Errorf("kreact validate of a manifest: %s", transcript(code, stdout, stderr))
	}
}

// TestWebhooksPrintsTheRuleObjectsConfiguration: kreact webhooks
// --admission-validate-rules prints what kreact run
// --admission-validate-rules applies, even for rules without admission
// handlers, for those who apply the configurations themselves.
func TestWebhooksPrintsTheRuleObjectsConfiguration(t *testing.T) {
	code, stdout, stderr := run(t, "webhooks", "-f", "testdata/validate/valid.yaml", "--admission-validate-rules", "--admission-url", "https://127.0.0.1:9443")
	if code != exitOK {
		t.Fatalf("kreact webhooks: %s", transcript(code, stdout, stderr))
	}
	for _, want := range []string{"kind: ValidatingWebhookConfiguration", "name: kreact-rule-objects", "name: rules.kreact.dev", "url: https://127.0.0.1:9443/kreact.dev/rules", "failurePolicy: Ignore", "- clusterrules"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("kreact webhooks --admission-validate-rules does not print %q:\n%s", want, stdout)
		}
	}
	// Without it, a rule set without admission handlers prints nothing.
	if code, stdout, _ := run(t, "webhooks", "-f", "testdata/validate/valid.yaml", "--admission-url", "https://127.0.0.1:9443"); code != exitOK || stdout != "" {
		t.Errorf("kreact webhooks without admission handlers: exit %d\n%s", code, stdout)
	}
}
