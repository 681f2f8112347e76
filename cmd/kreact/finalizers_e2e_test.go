//go:build e2e

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestFinalizersRelease runs `kreact finalizers release` against objects
// left with a rule's finalizer, as if kreact had been uninstalled: one
// namespace first, then every namespace, then through the rule's file.
func TestFinalizersRelease(t *testing.T) {
	ctx := t.Context()
	dyn := dynamicClient(t)
	cmGVR := configMapsGVR
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	rule := "gone-" + hex.EncodeToString(suffix)
	fin := "kreact.dev/" + rule
	const other = "example.com/keep"
	nsA, nsB := rule+"-a", rule+"-b"
	createNamespace(t, nsA)
	createNamespace(t, nsB)
	create := func(ns, name string, labels map[string]string, finalizers ...string) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		obj.SetNamespace(ns)
		obj.SetName(name)
		obj.SetLabels(labels)
		obj.SetFinalizers(finalizers)
		if _, err := dyn.Resource(cmGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	finalizersOf := func(ns, name string) ([]string, bool) {
		t.Helper()
		obj, err := dyn.Resource(cmGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return obj.GetFinalizers(), true
	}
	create(nsA, "plain", nil, fin)
	create(nsA, "shared", nil, other, fin)
	create(nsA, "deleted", nil, fin)
	create(nsA, "untouched", nil, other)
	create(nsB, "elsewhere", nil, fin)
	// The deleted object waits on the finalizer, as after kreact went away.
	if err := dyn.Resource(cmGVR).Namespace(nsA).Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{"shared", "untouched"} {
			_, _ = dyn.Resource(cmGVR).Namespace(nsA).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
	})
	kubeconfig := cluster.KubeconfigPath()

	// -n: one namespace only. No kreact runs: the finalizers stay off
	// while it watches them (--wait, 5s by default).
	code, stdout, stderr := run(t, "finalizers", "release", rule, "cm", "-n", nsA, "--kubeconfig", kubeconfig)
	if code != exitOK {
		t.Fatalf("release -n %s: %s", nsA, transcript(code, stdout, stderr))
	}
	for _, want := range []string{
		"releasing " + fin + " from configmaps in namespace " + nsA,
		"configmaps " + nsA + "/plain released",
		"configmaps " + nsA + "/shared released",
		"configmaps " + nsA + "/deleted released",
		"3 objects released from " + fin,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "untouched") || strings.Contains(stdout, "elsewhere") {
		t.Errorf("output names objects that were not released:\n%s", stdout)
	}
	if f, _ := finalizersOf(nsA, "plain"); len(f) != 0 {
		t.Errorf("plain still has finalizers %v", f)
	}
	if f, _ := finalizersOf(nsA, "shared"); !slices.Equal(f, []string{other}) {
		t.Errorf("shared has finalizers %v, want only %s", f, other)
	}
	if f, _ := finalizersOf(nsA, "untouched"); !slices.Equal(f, []string{other}) {
		t.Errorf("untouched has finalizers %v, want %s", f, other)
	}
	testcluster.Eventually(t, "the deleted ConfigMap to go once released", func() bool {
		_, exists := finalizersOf(nsA, "deleted")
		return !exists
	})
	if f, _ := finalizersOf(nsB, "elsewhere"); !slices.Equal(f, []string{fin}) {
		t.Errorf("elsewhere (another namespace) has finalizers %v, want %s kept", f, fin)
	}

	// Through the rule's file: its namespaces and selector are not applied,
	// since an object that left them keeps the finalizer.
	dir := t.TempDir()
	ruleFile := filepath.Join(dir, "rule.yaml")
	if err := os.WriteFile(ruleFile, fmt.Appendf(nil, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
      labelSelector: sync=yes
  finalizer: true
  script: |
    function onDelete(obj, ctx) {}
`, rule, nsA), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "finalizers", "release", rule, "-f", dir, "--kubeconfig", kubeconfig, "--wait", "0")
	if code != exitOK {
		t.Fatalf("release -f: %s", transcript(code, stdout, stderr))
	}
	for _, want := range []string{
		"releasing " + fin + " from configmaps in every namespace",
		"configmaps " + nsB + "/elsewhere released",
		"1 object released from " + fin,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if f, _ := finalizersOf(nsB, "elsewhere"); len(f) != 0 {
		t.Errorf("elsewhere still has finalizers %v", f)
	}

	// Nothing left: through the rule's file, a second run succeeds and
	// says so; through resource names, where the objects are the only
	// place that knows the rule, it is an unknown rule.
	code, stdout, stderr = run(t, "finalizers", "release", rule, "-f", dir, "--kubeconfig", kubeconfig)
	if code != exitOK || !strings.Contains(stdout, "0 objects released from "+fin) {
		t.Errorf("release -f with nothing to release: %s", transcript(code, stdout, stderr))
	}
	code, stdout, stderr = run(t, "finalizers", "release", rule, "configmaps", "-A", "--kubeconfig", kubeconfig)
	if code != exitInvalid || !strings.Contains(stderr, "no object of configmaps in every namespace carries "+fin+": rule "+rule+" is unknown, does not watch them, or was released already") {
		t.Errorf("release with nothing to release: %s", transcript(code, stdout, stderr))
	}

	// Objects that cannot be released are reported, and the exit code is 1:
	// here the user may list ConfigMaps but not patch them.
	create(nsB, "locked", nil, fin)
	t.Cleanup(func() {
		_, _ = dyn.Resource(cmGVR).Namespace(nsB).Patch(context.Background(), "locked", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	applyManifests(t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: %[1]s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: %[1]s}]`, nsB))
	readerKubeconfig := writeKubeconfig(t, serviceAccountConfig(t, nsB, "reader"))
	var released bool
	testcluster.Eventually(t, "release as a reader to fail (once the RoleBinding is in force)", func() bool {
		code, stdout, stderr = run(t, "finalizers", "release", rule, "cm", "-n", nsB, "--kubeconfig", readerKubeconfig, "--wait", "0")
		released = code == exitOK && !strings.Contains(stdout, "0 objects")
		return code == exitError && strings.Contains(stderr, "release "+nsB+"/locked") && strings.Contains(stderr, "forbidden")
	})
	if released || !strings.Contains(stdout, "0 objects released") || !strings.Contains(stderr, "some objects still carry "+fin) {
		t.Errorf("release without the right to patch: %s", transcript(code, stdout, stderr))
	}
	if f, _ := finalizersOf(nsB, "locked"); !slices.Equal(f, []string{fin}) {
		t.Errorf("locked has finalizers %v, want %s kept", f, fin)
	}

	// Exit codes.
	unreachable := filepath.Join(dir, "unreachable")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		args      []string
		want      int
		wantInErr string
	}{
		{"no rule", []string{"finalizers", "release"}, exitUsage, "name the rule"},
		{"no resource", []string{"finalizers", "release", rule}, exitUsage, "name the resources"},
		{"resources and -f", []string{"finalizers", "release", rule, "cm", "-f", dir}, exitUsage, "not both"},
		{"unknown subcommand", []string{"finalizers", "remove", rule}, exitUsage, `unknown subcommand "remove"`},
		{"bad rule name", []string{"finalizers", "release", "Not_A_Rule", "cm"}, exitInvalid, "rule name"},
		{"rule not in the files", []string{"finalizers", "release", "other-rule", "-f", dir}, exitInvalid, `no rule "other-rule"`},
		{"negative wait", []string{"finalizers", "release", rule, "cm", "--wait", "-1s"}, exitUsage, "--wait -1s"},
		{"unknown resource", []string{"finalizers", "release", rule, "configmpas", "--kubeconfig", kubeconfig}, exitInvalid, `did you mean "configmaps"`},
		{"unreachable cluster", []string{"finalizers", "release", rule, "cm", "--kubeconfig", unreachable}, exitCluster, "127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, c.args...)
			if code != c.want || !strings.Contains(stderr, c.wantInErr) {
				t.Errorf("kreact %s: want exit %d and %q in stderr; got %s", strings.Join(c.args, " "), c.want, c.wantInErr, transcript(code, stdout, stderr))
			}
		})
	}
}

// TestFinalizersReleaseWhileKreactRuns: a release against a kreact that
// still runs the rule says that the finalizer came back and exits 1
// (kreact logs that it put it back); once kreact is stopped, the release
// holds. A rule no object knows is an error, naming the kreact
// finalizers there.
func TestFinalizersReleaseWhileKreactRuns(t *testing.T) {
	ctx := t.Context()
	dyn := dynamicClient(t)
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	rule := "held-" + hex.EncodeToString(suffix)
	fin := "kreact.dev/" + rule
	ns := rule
	createNamespace(t, ns)
	createNamespacedConfigMap(t, dyn, ns, "kept")
	dir := t.TempDir()
	writeRule(t, dir, "rule.yaml", fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  finalizer: true
  script: |
    function onDelete(obj, ctx) {}
`, rule, ns))
	kubeconfig := cluster.KubeconfigPath()
	k := startCLI(t, "run", "-f", dir, "--kubeconfig", kubeconfig)
	finalizersOf := func() []string {
		t.Helper()
		obj, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.GetFinalizers()
	}
	testcluster.Eventually(t, "kreact to put its finalizer on the ConfigMap", func() bool { return slices.Contains(finalizersOf(), fin) })

	// The wait is long so that a slow machine cannot make the finalizer
	// come back after it: the release returns as soon as it is back.
	code, stdout, stderr := run(t, "finalizers", "release", rule, "cm", "-n", ns, "--kubeconfig", kubeconfig, "--wait", "2m")
	if code != exitError ||
		!strings.Contains(stdout, "configmaps "+ns+"/kept released") ||
		!strings.Contains(stdout, "configmaps "+ns+"/kept has "+fin+" again") ||
		!strings.Contains(stderr, fin+" came back on 1 of the 1 object released: kreact still runs rule "+rule+" and puts it back; stop kreact, or remove the rule from its rule set") {
		t.Errorf("release while kreact runs: %s", transcript(code, stdout, stderr))
	}
	testcluster.Eventually(t, "kreact to log that it put the finalizer back", func() bool {
		return k.stderr.Count("the rule's finalizer was removed from an object the rule watches; kreact puts it back", "object="+ns+"/kept") > 0
	})

	code, stdout, stderr = run(t, "finalizers", "release", "no-such-rule", "cm", "-n", ns, "--kubeconfig", kubeconfig)
	if code != exitInvalid || !strings.Contains(stderr, "no object of configmaps in namespace "+ns+" carries kreact.dev/no-such-rule") ||
		!strings.Contains(stderr, "kreact finalizers there: "+fin+" (1 object)") {
		t.Errorf("release of an unknown rule: %s", transcript(code, stdout, stderr))
	}

	if code := k.stop(); code != exitOK {
		t.Fatalf("kreact run exited %d:\n%s", code, k.stderr)
	}
	code, stdout, stderr = run(t, "finalizers", "release", rule, "cm", "-n", ns, "--kubeconfig", kubeconfig)
	if code != exitOK || !strings.Contains(stdout, "1 object released from "+fin) {
		t.Errorf("release once kreact stopped: %s", transcript(code, stdout, stderr))
	}
	if f := finalizersOf(); slices.Contains(f, fin) {
		t.Errorf("the ConfigMap has finalizers %v after the release", f)
	}
}

// TestFinalizersReleaseHelp keeps the subcommand discoverable.
func TestFinalizersReleaseHelp(t *testing.T) {
	for _, args := range [][]string{{"finalizers", "--help"}, {"help", "finalizers"}, {"finalizers", "release", "--help"}} {
		code, stdout, stderr := run(t, args...)
		if code != exitOK || !strings.Contains(stdout, "kreact finalizers release RULE") {
			t.Errorf("kreact %s: %s", strings.Join(args, " "), transcript(code, stdout, stderr))
		}
	}
}
