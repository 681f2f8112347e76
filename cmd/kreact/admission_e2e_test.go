//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// kubectlE2E runs the control plane's kubectl against the test cluster and
// returns its combined output.
func kubectlE2E(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("KREACT_BIN_DIR")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args = append(args, "--kubeconfig", cluster.KubeconfigPath(), "--cache-dir", t.TempDir())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func admissionRule(name, resource, namespaces, labelSelector, extra, script string) string {
	watch := "    - resource: " + resource + "\n"
	if namespaces != "" {
		watch += "      namespaces: [" + namespaces + "]\n"
	}
	if labelSelector != "" {
		watch += "      labelSelector: " + labelSelector + "\n"
	}
	return fmt.Sprintf("apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: %s\nspec:\n  watch:\n%s  timeout: 300ms\n%s  script: |\n%s",
		name, watch, extra, indentBlock(script, "    "))
}

var (
	validatingConfigsGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingConfigsGVR   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// TestAdmissionAgainstTheAPIServer: the API server calls kreact's
// webhooks over TLS on loopback. A mutating rule's label is in the stored
// Namespace; a validating rule's refusal is kubectl's error, with the
// rule's message; audit mode refuses nothing and counts; a handler that
// throws follows its rule's failure policy (Fail refuses, Ignore lets
// through a call that times out); a rule removed by hot reload stops
// intercepting; and with kreact stopped, Ignore lets requests through.
func TestAdmissionAgainstTheAPIServer(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const name = "kreact-adm-e2e"
	for _, ns := range []string{"adm-owner", "adm-audit", "adm-throw", "adm-loop"} {
		ensureNamespace(t, dyn, ns)
	}
	t.Cleanup(func() {
		// The configurations outlive kreact by design; other tests must
		// not meet them.
		for _, gvr := range []schema.GroupVersionResource{validatingConfigsGVR, mutatingConfigsGVR} {
			if err := dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", gvr.Resource, name, err)
			}
		}
	})

	dir := t.TempDir()
	writeRule(t, dir, "defaults.yaml", admissionRule("ns-defaults", "namespaces", "", "adm-e2e=yes", "  events: [add]\n",
		`function onMutate(req, ctx) {
  if (!req.object.metadata.labels.team) return {metadata: {labels: {team: "unassigned"}}};
}`))
	writeRule(t, dir, "owner.yaml", admissionRule("owner-required", "configmaps", "adm-owner", "", "",
		`function onValidate(req, ctx) {
  if (!req.object.metadata.labels?.owner) return "a ConfigMap needs an owner label";
}`))
	writeRule(t, dir, "audit.yaml", admissionRule("audited", "configmaps", "adm-audit", "", "  admission: {mode: audit, failurePolicy: Fail}\n",
		`function onValidate(req, ctx) { return "no ConfigMap may be made here"; }`))
	writeRule(t, dir, "throw.yaml", admissionRule("thrower", "configmaps", "adm-throw", "", "  admission: {failurePolicy: Fail}\n",
		`function onValidate(req, ctx) { throw new Error("boom"); }`))
	writeRule(t, dir, "loop.yaml", admissionRule("looper", "configmaps", "adm-loop", "", "",
		`function onValidate(req, ctx) { for (;;) {} }`))

	addr := testcluster.FreeAddr(t)
	metricsAddr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--reload-interval", "200ms",
		"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name,
		"--admission-namespace", "kreact-adm-e2e", "--metrics-bind-address", metricsAddr)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	testcluster.Eventually(t, "the webhook configurations to be applied", func() bool {
		_, errV := dyn.Resource(validatingConfigsGVR).Get(t.Context(), name, metav1.GetOptions{})
		_, errM := dyn.Resource(mutatingConfigsGVR).Get(t.Context(), name, metav1.GetOptions{})
		return errV == nil && errM == nil
	})

	// The API server picks configurations up from a watch: the first
	// requests may miss them.
	var out string
	testcluster.Eventually(t, "kubectl to show the rule's refusal", func() bool {
		out, _ = kubectlE2E(t, "", "create", "configmap", "no-owner", "-n", "adm-owner")
		return strings.Contains(out, "rule owner-required: a ConfigMap needs an owner label")
	})
	if !strings.Contains(out, `admission webhook "owner-required.kreact.dev" denied the request`) {
		t.Errorf("kubectl create: %s", out)
	}
	if _, err := dyn.Resource(configMapsGVR).Namespace("adm-owner").Get(t.Context(), "no-owner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused ConfigMap exists: %v", err)
	}
	createConfigMap := func(ns, cmName string, labels map[string]any) error {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": cmName, "namespace": ns, "labels": labels}}}
		_, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
		return err
	}
	if err := createConfigMap("adm-owner", "owned", map[string]any{"owner": "team-a"}); err != nil {
		t.Errorf("a ConfigMap with its owner label refused: %v", err)
	}

	i := 0
	testcluster.Eventually(t, "a Namespace to be labelled at its creation", func() bool {
		i++
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": fmt.Sprintf("adm-new-%d", i), "labels": map[string]any{"adm-e2e": "yes"}}}}
		created, err := dyn.Resource(namespacesGVR).Create(t.Context(), ns, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := dyn.Resource(namespacesGVR).Get(t.Context(), created.GetName(), metav1.GetOptions{})
		return err == nil && stored.GetLabels()["team"] == "unassigned" && created.GetLabels()["team"] == "unassigned"
	})

	testcluster.Eventually(t, "the audit rule's failurePolicy Fail to be warned of", func() bool {
		return strings.Contains(c.stderr.String(), `level=WARN msg="rule \"audited\": spec.admission.failurePolicy Fail has no effect in audit mode`)
	})
	testcluster.Eventually(t, "the audit rule to count what it would refuse", func() bool {
		i++
		out, err := kubectlE2E(t, "", "create", "configmap", fmt.Sprintf("audited-%d", i), "-n", "adm-audit")
		if err != nil {
			t.Fatalf("audit mode refused: %s", out)
		}
		_, metrics := testcluster.HTTPGet(t, "http://"+metricsAddr+"/metrics")
		return strings.Contains(metrics, `kreact_admission_requests_total{operation="CREATE",result="would-deny",rule="audited"}`) &&
			strings.Contains(out, "Warning: audit: rule audited: no ConfigMap may be made here")
	})

	testcluster.Eventually(t, "a throwing handler with failurePolicy Fail to refuse", func() bool {
		err := createConfigMap("adm-throw", fmt.Sprintf("thrown-%d", i), nil)
		i++
		return err != nil && strings.Contains(err.Error(), "rule thrower: onValidate: ") && strings.Contains(err.Error(), "Error: boom")
	})
	testcluster.Eventually(t, "a handler that times out, with failurePolicy Ignore, to let requests through", func() bool {
		_, metrics := testcluster.HTTPGet(t, "http://"+metricsAddr+"/metrics")
		if strings.Contains(metrics, `kreact_admission_requests_total{operation="CREATE",result="failed",rule="looper"}`) {
			return true
		}
		i++
		if err := createConfigMap("adm-loop", fmt.Sprintf("looped-%d", i), nil); err != nil {
			t.Fatalf("failurePolicy Ignore refused: %v", err)
		}
		return false
	})

	// Hot reload: the rule removed, its webhook goes and nothing refuses.
	if err := os.Remove(filepath.Join(dir, "owner.yaml")); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the removed rule to stop intercepting", func() bool {
		i++
		return createConfigMap("adm-owner", fmt.Sprintf("free-%d", i), nil) == nil
	})
	// The server stops answering for the rule at once; the configuration
	// it applies follows.
	testcluster.Eventually(t, "the removed rule's webhook to go from the configuration", func() bool {
		v, err := dyn.Resource(validatingConfigsGVR).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hooks, _, _ := unstructured.NestedSlice(v.Object, "webhooks")
		for _, h := range hooks {
			if n, _, _ := unstructured.NestedString(h.(map[string]any), "name"); n == "owner-required.kreact.dev" {
				return false
			}
		}
		return true
	})

	// kreact stopped: the mutating webhook is still configured, with
	// failurePolicy Ignore, and the API server lets the request through.
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "adm-while-down", "labels": map[string]any{"adm-e2e": "yes"}}}}
	created, err := dyn.Resource(namespacesGVR).Create(t.Context(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kreact down with failurePolicy Ignore refused the request: %v", err)
	}
	if created.GetLabels()["team"] != "" {
		t.Errorf("a Namespace created while kreact is down was mutated: %v", created.GetLabels())
	}
}

// TestAdmissionInTheDefaultNamespace: issue 37. A kreact outside the
// cluster (--admission-url, no Pod) has no namespace of its own, so a
// rule on `default`, the namespace a first try uses, is intercepted: the
// create it refuses is refused. Where the webhooks call kreact's Service
// in `default` (no --admission-url), `default` is kreact's own and never
// intercepted, and kreact run says so, at the rule's position, and exits
// 3 when no rule is left.
func TestAdmissionInTheDefaultNamespace(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const name = "kreact-adm-default"
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{validatingConfigsGVR, mutatingConfigsGVR} {
			if err := dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", gvr.Resource, name, err)
			}
		}
	})
	dir := t.TempDir()
	// The label keeps the rule off the ConfigMaps of other tests.
	writeRule(t, dir, "deny.yaml", admissionRule("deny-in-default", "configmaps", "default", "adm-default=yes", "  events: [add]\n",
		`function onValidate(req, ctx) { return "no labelled ConfigMap in default"; }`))

	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--reload-interval", "0",
		"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	i := 0
	testcluster.Eventually(t, "a ConfigMap created in default to be refused", func() bool {
		i++
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("adm-default-%d", i), "namespace": "default", "labels": map[string]any{"adm-default": "yes"}}}}
		_, err := dyn.Resource(configMapsGVR).Namespace("default").Create(t.Context(), cm, metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), "rule deny-in-default: no labelled ConfigMap in default")
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	if strings.Contains(c.stderr.String(), "level=ERROR") {
		t.Errorf("kreact run logged errors:\n%s", c.stderr.String())
	}

	var out, errOut testcluster.LogBuffer
	// A kreact that accepted the rule would run until stopped.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code := runMain(ctx, []string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--admission-bind-address", testcluster.FreeAddr(t),
		"--admission-name", name}, &out, &errOut)
	want := "\n" + filepath.Join(dir, "deny.yaml") + `:8:19: rule "deny-in-default": spec.watch[0].namespaces: default is never intercepted, so that kreact's Pods can start while it is down`
	if code != exitInvalid || !strings.Contains(errOut.String(), want) {
		t.Errorf("kreact run with its Service in default: exit %d, stderr:\n%s\nwant exit %d and the line %s", code, errOut.String(), exitInvalid, want)
	}
}
