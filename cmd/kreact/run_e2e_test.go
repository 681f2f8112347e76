//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

func ruleYAML(name, namespace, script string, permissions string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  timeout: 200ms
%s  script: |
%s`, name, namespace, permissions, indentBlock(script, "    "))
}

func indentBlock(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

const patchPermission = "  permissions:\n    - resources: [configmaps]\n      verbs: [patch]\n"

func labeller(namespace, value string) string {
	return ruleYAML("labeller", namespace, fmt.Sprintf(`function onAdd(obj, ctx) {
  kreact.patch(obj, {metadata: {labels: {version: %q}}});
}`, value), patchPermission)
}

func writeRule(t *testing.T, dir, file, content string) {
	t.Helper()
	// Write then rename, so the reload loop never reads half a file.
	tmp := filepath.Join(dir, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}

func createNamespacedConfigMap(t *testing.T, dyn dynamic.Interface, ns, name string) {
	t.Helper()
	ensureNamespace(t, dyn, ns)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}}}
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func labelOf(t *testing.T, dyn dynamic.Interface, ns, name string) string {
	cm, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.GetLabels()["version"]
}

// TestRunIsolatesBrokenRulesAndReloads: a throwing, a looping, a
// syntactically broken and an over-reaching rule are each reported with
// their position while a good rule keeps working; editing the good rule
// changes behaviour without a restart, and breaking it keeps the old one.
func TestRunIsolatesBrokenRulesAndReloads(t *testing.T) {
	const ns = "run-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	dir := t.TempDir()
	writeRule(t, dir, "good.yaml", labeller(ns, "one"))
	writeRule(t, dir, "thrower.yaml", ruleYAML("thrower", ns, `function onAdd(obj, ctx) {
  throw new Error("boom on " + obj.metadata.name);
}`, ""))
	writeRule(t, dir, "looper.yaml", ruleYAML("looper", ns, `function onAdd(obj, ctx) {
  while (true) {}
}`, ""))
	writeRule(t, dir, "syntax.yaml", ruleYAML("syntax", ns, `function onAdd(obj, ctx) {
  if (
}`, ""))
	writeRule(t, dir, "sneaky.yaml", ruleYAML("sneaky", ns, `function onAdd(obj, ctx) {
  kreact.delete(obj);
}`, ""))

	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--reload-interval", "200ms")
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	if !strings.Contains(c.stderr.String(), `rule=syntax error="`) || !strings.Contains(c.stderr.String(), `syntax.yaml:13:5: rule \"syntax\": script: Unexpected token }`) {
		t.Errorf("the syntax error is not reported with its position in syntax.yaml")
	}

	createNamespacedConfigMap(t, dyn, ns, "first")
	testcluster.Eventually(t, "the good rule to label first", func() bool { return labelOf(t, dyn, ns, "first") == "one" })
	testcluster.Eventually(t, "the thrower reported with its position", func() bool {
		return strings.Contains(c.stderr.String(), "rule=thrower") && strings.Contains(c.stderr.String(), "thrower.yaml:12:13")
	})
	testcluster.Eventually(t, "the looper reported as timed out", func() bool {
		s := c.stderr.String()
		return strings.Contains(s, "rule=looper") && strings.Contains(s, "timed out")
	})
	testcluster.Eventually(t, "the undeclared delete refused", func() bool {
		return strings.Contains(c.stderr.String(), `rule \"sneaky\" may not delete configmaps`)
	})
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), "first", metav1.GetOptions{}); err != nil {
		t.Errorf("configmap first after the refused delete: %v", err)
	}

	writeRule(t, dir, "good.yaml", labeller(ns, "two"))
	testcluster.Eventually(t, "the edited rule to reload", func() bool { return strings.Contains(c.stderr.String(), "rule changed; restarting") })
	createNamespacedConfigMap(t, dyn, ns, "second")
	testcluster.Eventually(t, "the new version to label second", func() bool { return labelOf(t, dyn, ns, "second") == "two" })

	broken := strings.Replace(labeller(ns, "three"), "kreact.patch(", "kreact.patch((", 1)
	writeRule(t, dir, "good.yaml", broken)
	testcluster.Eventually(t, "the broken edit to be reported", func() bool {
		return strings.Contains(c.stderr.String(), "reload: rules with errors keep their previous version") && strings.Contains(c.stderr.String(), "good.yaml:")
	})
	createNamespacedConfigMap(t, dyn, ns, "third")
	testcluster.Eventually(t, "the previous version to label third", func() bool { return labelOf(t, dyn, ns, "third") == "two" })

	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d after SIGINT, want 0", code)
	}
}

func TestRunDryRunChangesNothing(t *testing.T) {
	const ns = "run-dry"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	dir := t.TempDir()
	writeRule(t, dir, "good.yaml", labeller(ns, "one"))
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--dry-run")
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	createNamespacedConfigMap(t, dyn, ns, "untouched")
	testcluster.Eventually(t, "the dry-run patch to be logged", func() bool { return strings.Contains(c.stderr.String(), "dry-run: would patch") })
	if v := labelOf(t, dyn, ns, "untouched"); v != "" {
		t.Errorf("dry-run labelled the configmap version=%s", v)
	}
}

func TestRunRejectsAllBrokenRules(t *testing.T) {
	dir := t.TempDir()
	writeRule(t, dir, "bad.yaml", "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: bad}\nspec:\n  wach: []\n")
	var out, errOut testcluster.LogBuffer
	code := runMain(t.Context(), []string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath()}, &out, &errOut)
	if code != exitInvalid {
		t.Errorf("exit code %d, want %d", code, exitInvalid)
	}
	if !strings.Contains(errOut.String(), "bad.yaml:5:3:") {
		t.Errorf("stderr = %q, want the position of the unknown field", errOut.String())
	}
}

// A folder whose only rule names a misspelt resource can never run:
// kreact run exits 3 with the position and the did-you-mean hint.
func TestRunExitsWhenTheOnlyRuleHasATypo(t *testing.T) {
	dir := t.TempDir()
	writeRule(t, dir, "typo.yaml", strings.Replace(labeller("default", "x"), "resource: configmaps", "resource: deploymnets", 1))
	var out, errOut testcluster.LogBuffer
	code := runMain(t.Context(), []string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath()}, &out, &errOut)
	if code != exitInvalid {
		t.Errorf("exit code %d, want %d", code, exitInvalid)
	}
	want := "\n" + filepath.Join(dir, `typo.yaml:7:17: spec.watch[0].resource: "deploymnets": no such resource; did you mean "deployments"?`) + "\n"
	if !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr = %s\nwant the line %s", errOut.String(), want)
	}
}

// The reload sequence good → misspelt resource → syntax error → fixed
// keeps handling new objects at every step, and each rejected edit is one
// log line naming the rule.
func TestRunReloadKeepsTheGoodVersionThroughBadEdits(t *testing.T) {
	const ns = "run-reload-typo"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	dir := t.TempDir()
	writeRule(t, dir, "rule.yaml", labeller(ns, "one"))
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--reload-interval", "200ms")
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	createNamespacedConfigMap(t, dyn, ns, "a")
	testcluster.Eventually(t, "version one to label a", func() bool { return labelOf(t, dyn, ns, "a") == "one" })

	const rejected = "reload: rules with errors keep their previous version"
	rejections := func() []string {
		var out []string
		for _, line := range strings.Split(c.stderr.String(), "\n") {
			if strings.Contains(line, rejected) {
				out = append(out, line)
			}
		}
		return out
	}
	steps := []struct {
		name, content, logged string
	}{
		{"misspelt resource", strings.Replace(labeller(ns, "two"), "resource: configmaps", "resource: confgimaps", 1),
			`rule.yaml:7:17: spec.watch[0].resource: \"confgimaps\": no such resource; did you mean \"configmaps\"?`},
		{"syntax error", strings.Replace(labeller(ns, "three"), "kreact.patch(", "kreact.patch((", 1),
			`rule.yaml:15:67: rule \"labeller\": script: Unexpected token ;`},
	}
	for i, step := range steps {
		writeRule(t, dir, "rule.yaml", step.content)
		testcluster.Eventually(t, step.name+" to be rejected", func() bool { return len(rejections()) == i+1 })
		line := rejections()[i]
		if !strings.Contains(line, "rule=labeller") || !strings.Contains(line, step.logged) {
			t.Errorf("%s logged %s\nwant rule=labeller and %s", step.name, line, step.logged)
		}
		name := fmt.Sprintf("after-%d", i)
		createNamespacedConfigMap(t, dyn, ns, name)
		testcluster.Eventually(t, "version one to label "+name, func() bool { return labelOf(t, dyn, ns, name) == "one" })
	}
	writeRule(t, dir, "rule.yaml", labeller(ns, "four"))
	testcluster.Eventually(t, "the fixed rule to reload", func() bool { return strings.Contains(c.stderr.String(), "rules reloaded") })
	createNamespacedConfigMap(t, dyn, ns, "fixed")
	testcluster.Eventually(t, "version four to label fixed", func() bool { return labelOf(t, dyn, ns, "fixed") == "four" })
	if n := len(rejections()); n != len(steps) {
		t.Errorf("%d rejection lines, want one per bad edit (%d):\n%s", n, len(steps), strings.Join(rejections(), "\n"))
	}
}

// TestRunRefusesWhatValidateAndTestRefuse: the rules of refusedRules,
// which validate and test refuse, make kreact run exit 3 with the same
// error, when no other rule can run.
func TestRunRefusesWhatValidateAndTestRefuse(t *testing.T) {
	for _, c := range refusedRules {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			refusedRule(t, dir, c.name, c.spec, c.script)
			var out, errOut testcluster.LogBuffer
			// A rule that run accepts keeps it running: stop it then,
			// and fail, rather than hang.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			code := runMain(ctx, []string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath()}, &out, &errOut)
			if code != exitInvalid {
				t.Errorf("exit code %d, want %d", code, exitInvalid)
			}
			if !strings.Contains(errOut.String(), c.want) {
				t.Errorf("stderr = %s\nwant %s", errOut.String(), c.want)
			}
		})
	}
}

// TestRunAndRecordReportTheSameErrors: kreact run and record report the
// errors of a file as validate does, each once (issue 37: run logged the
// admission errors twice and its exit summary listed 4 of 9 errors,
// record listed 5): record refuses the file with them, run exits 3 with
// them when no rule can run, and with a valid rule beside logs one line
// per error, "rules with errors are not running", and no other error.
func TestRunAndRecordReportTheSameErrors(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(manyKinds)
	if err != nil {
		t.Fatal(err)
	}
	rule := filepath.Join(dir, "rule.yaml")
	writeRule(t, dir, "rule.yaml", string(data))
	_, _, vErr := run(t, "validate", "-f", rule)
	want := validateErrors(vErr)
	// The lines of stderr that are the file's problems.
	problems := func(stderr string) string {
		var out []string
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, rule+":") {
				out = append(out, line)
			}
		}
		return strings.Join(out, "\n")
	}

	code, stdout, stderr := run(t, "record", "-f", rule, "cm", "--for", "1s", "--kubeconfig", cluster.KubeconfigPath())
	if code != exitInvalid || problems(stderr) != want {
		t.Errorf("kreact record: %s\nwant exit %d and validate's errors:\n%s", transcript(code, stdout, stderr), exitInvalid, want)
	}

	// A kreact that ran a rule would run until stopped.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errOut testcluster.LogBuffer
	if code := runMain(ctx, []string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath()}, &out, &errOut); code != exitInvalid || problems(errOut.String()) != want {
		t.Errorf("kreact run: %s\nwant exit %d and validate's errors:\n%s", transcript(code, out.String(), errOut.String()), exitInvalid, want)
	}

	writeRule(t, dir, "good.yaml", labeller("run-same-errors", "x"))
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--reload-interval", "0")
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	var logged []string
	for _, line := range strings.Split(c.stderr.String(), "\n") {
		if !strings.Contains(line, "level=ERROR") {
			continue
		}
		_, quoted, ok := strings.Cut(line, ` msg="rules with errors are not running" `)
		if _, quoted, ok = strings.Cut(quoted, "error="); !ok {
			t.Errorf("an error line that is not a rule's: %s", line)
			continue
		}
		msg, err := strconv.Unquote(quoted)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		logged = append(logged, msg)
	}
	if got := strings.Join(logged, "\n"); got != want {
		t.Errorf("kreact run logged the errors\n%s\nwant validate's, once each:\n%s", got, want)
	}
}
