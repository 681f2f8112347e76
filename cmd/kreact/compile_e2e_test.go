//go:build e2e

package main

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/scripting"
)

// TestRunCompilesEachRuleOnce: kreact run checks every rule (validate),
// loads it into the engine, which checks it again, and into the admission
// server, which applies its webhooks; each rule's script is compiled once
// for all of them (scripting.CompileRule shares it through
// rules.Rule.Compiled).
func TestRunCompilesEachRuleOnce(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const name = "kreact-compile-once"
	ensureNamespace(t, dyn, "compile-once")
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{validatingConfigsGVR, mutatingConfigsGVR} {
			if err := dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", gvr.Resource, name, err)
			}
		}
	})
	dir := t.TempDir()
	writeRule(t, dir, "labeller.yaml", labeller("compile-once", "v1"))
	writeRule(t, dir, "logger.yaml", ruleYAML("logger", "compile-once", `function onUpdate(obj, ctx) { kreact.log("updated"); }`, ""))
	writeRule(t, dir, "owner.yaml", admissionRule("owner-required", "configmaps", "compile-once", "", "",
		`function onValidate(req, ctx) {
  if (!req.object.metadata.labels?.owner) return "a ConfigMap needs an owner label";
}`))
	const rules = 3

	before := scripting.Compiles()
	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(),
		"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name,
		"--admission-namespace", name, "--metrics-bind-address", testcluster.FreeAddr(t))
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	testcluster.Eventually(t, "the webhook configuration to be applied", func() bool {
		_, err := dyn.Resource(validatingConfigsGVR).Get(t.Context(), name, metav1.GetOptions{})
		return err == nil
	})
	if got := scripting.Compiles() - before; got != rules {
		t.Errorf("kreact run compiled %d scripts at start, want %d: one per rule", got, rules)
	}
}
