//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// previewRule acts on most of the ConfigMaps of its namespace, in three
// ways that the number in each one's data chooses: a merge patch of a
// label, a server-side apply of a data key (which the API server merges
// with the keys already there), an Event; and on some, nothing.
const previewRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: previewed
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  permissions:
    - resources: [configmaps]
      verbs: [patch, apply, event]
  script: |
    function onAdd(cm, ctx) {
      const n = parseInt(cm.data.n, 10);
      if (n %% 10 === 0) return;
      if (n %% 3 === 0) {
        kreact.apply({apiVersion: "v1", kind: "ConfigMap",
          metadata: {name: cm.metadata.name, namespace: cm.metadata.namespace},
          data: {applied: "n" + n}});
      } else {
        kreact.patch(cm, {metadata: {labels: {parity: n %% 2 ? "odd" : "even"}}});
      }
      if (n %% 7 === 0) kreact.event(cm, {reason: "Seven", message: "a multiple of seven: " + n});
    }
`

// freshNamespace creates a namespace named prefix and a number no test
// of this process has used, so that -count runs the tests again.
func freshNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%d", prefix, namespaces.Add(1))
	createNamespace(t, ns)
	return ns
}

var namespaces atomic.Int64

// previewDoc is what kreact preview -o json prints.
type previewDoc struct {
	Handed  int
	Objects []struct {
		Resource, Namespace, Name string
		Actions                   []struct {
			Action map[string]any
			Origin string
			Error  string
			Diff   string
			After  map[string]any
		}
	}
	Errors []string
}

// actionLine is what identifies an action in kreact run's log line for
// it and in a preview: rule, verb, target and the script's position.
type actionLine struct{ rule, verb, resource, namespace, name, origin string }

// TestPreviewListsWhatRunDoes: kreact preview of a rule over 100
// existing ConfigMaps changes nothing, and lists exactly the actions that
// kreact run then takes, each with the object that results: after kreact
// run, every object the preview showed reads as its dry run answered.
func TestPreviewListsWhatRunDoes(t *testing.T) {
	ctx := t.Context()
	ns := freshNamespace(t, "preview-e2e")
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	cms := dyn.Resource(configMapsGVR).Namespace(ns)
	const objects = 100
	for n := range objects {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%03d", n), "namespace": ns},
			"data":     map[string]any{"n": strconv.Itoa(n)}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	rule := filepath.Join(dir, "rule.yaml")
	if err := os.WriteFile(rule, []byte(fmt.Sprintf(previewRule, ns)), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(t, "preview", "-f", rule, "-o", "json", "--exit-code", "--kubeconfig", cluster.KubeconfigPath())
	if code != 5 {
		t.Fatalf("kreact preview --exit-code of a rule that acts: %s", transcript(code, stdout, stderr))
	}
	var doc previewDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("preview -o json: %v\n%s", err, stdout)
	}
	// stdout has the actions: stderr says what the preview does, not a
	// line per dry-run action.
	if !strings.Contains(stderr, "previewing: the rules are handed every object they watch, in dry-run") || strings.Contains(stderr, "dry-run: would") {
		t.Errorf("kreact preview's stderr:\n%s", stderr)
	}
	if doc.Handed != objects || len(doc.Errors) > 0 {
		t.Errorf("the preview handed %d objects with errors %q, want %d and none", doc.Handed, doc.Errors, objects)
	}

	// What the rule's logic says it does, to know that the preview is
	// not empty or partial for the same reason run would be.
	var want []actionLine
	// The script's lines in the file; the columns are compared between
	// the preview and kreact run.
	origin := func(line int) string { return fmt.Sprintf("%s:%d", rule, line) }
	for n := range objects {
		name := fmt.Sprintf("cm-%03d", n)
		switch {
		case n%10 == 0:
			continue
		case n%3 == 0:
			want = append(want, actionLine{"previewed", "apply", "configmaps", ns, name, origin(17)})
		default:
			want = append(want, actionLine{"previewed", "patch", "configmaps", ns, name, origin(21)})
		}
		if n%7 == 0 {
			want = append(want, actionLine{"previewed", "event", "configmaps", ns, name, origin(23)})
		}
	}
	var previewed []actionLine
	afters := map[string]map[string]any{}
	for _, o := range doc.Objects {
		for _, a := range o.Actions {
			s := func(k string) string { v, _ := a.Action[k].(string); return v }
			previewed = append(previewed, actionLine{s("rule"), s("verb"), s("resource"), s("namespace"), s("name"), a.Origin})
			if a.Error != "" {
				t.Errorf("%s %s/%s: the dry run was refused: %s", s("verb"), o.Namespace, o.Name, a.Error)
			}
			if s("verb") != "event" {
				if a.After == nil || a.Diff == "" {
					t.Errorf("%s %s/%s: no object or diff previewed", s("verb"), o.Namespace, o.Name)
				}
				// From the object there, only adding: the label, or the
				// key that the apply merges with the object's own.
				if strings.Contains(a.Diff, "\n-") || strings.Contains(a.Diff, "+apiVersion") ||
					!strings.Contains(a.Diff, "\n+    parity: ") && !strings.Contains(a.Diff, "\n+  applied: n") {
					t.Errorf("%s %s/%s: the diff is not from the object there:\n%s", s("verb"), o.Namespace, o.Name, a.Diff)
				}
				afters[o.Name] = a.After
			}
		}
	}
	sortLines := func(ls []actionLine) {
		slices.SortFunc(ls, func(a, b actionLine) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	}
	withoutColumns := func(ls []actionLine) []actionLine {
		out := slices.Clone(ls)
		for i := range out {
			if j := strings.LastIndex(out[i].origin, ":"); j > len(rule) {
				out[i].origin = out[i].origin[:j]
			}
		}
		return out
	}
	sortLines(want)
	sortLines(previewed)
	if !slices.Equal(withoutColumns(previewed), want) {
		t.Fatalf("the preview lists %d actions:\n%v\nthe rule takes %d:\n%v", len(previewed), previewed, len(want), want)
	}

	// Nothing changed.
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		_, applied, _ := unstructured.NestedString(cm.Object, "data", "applied")
		if _, labelled := cm.GetLabels()["parity"]; labelled || applied {
			t.Errorf("the preview changed %s: labels %v, data %v", cm.GetName(), cm.GetLabels(), cm.Object["data"])
		}
	}
	if events, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil || len(events.Items) > 0 {
		t.Errorf("the preview recorded %d events (%v)", len(events.Items), err)
	}

	// Now for real: every action kreact run takes is logged once done.
	c := startCLI(t, "run", "-f", rule, "--log-format", "json", "--kubeconfig", cluster.KubeconfigPath())
	done := func() []actionLine {
		var out []actionLine
		for line := range strings.SplitSeq(c.stderr.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil || !strings.HasSuffix(fmt.Sprint(l["msg"]), " done") {
				continue
			}
			s := func(k string) string { v, _ := l[k].(string); return v }
			out = append(out, actionLine{s("rule"), s("verb"), s("resource"), s("namespace"), s("name"), s("origin")})
		}
		return out
	}
	testcluster.Eventually(t, "kreact run to take as many actions as previewed", func() bool { return len(done()) >= len(want) })
	if code := c.stop(); code != exitOK {
		t.Fatalf("kreact run exited %d", code)
	}
	ran := done()
	sortLines(ran)
	if !slices.Equal(ran, previewed) {
		t.Errorf("kreact run took %d actions:\n%v\nthe preview listed %d:\n%v", len(ran), ran, len(previewed), previewed)
	}
	// Each object reads as the preview's dry run answered.
	for name, after := range afters {
		got, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		unstructured.RemoveNestedField(got.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(got.Object, "metadata", "resourceVersion")
		if !reflect.DeepEqual(got.Object, after) {
			t.Errorf("%s after kreact run:\n%v\nthe preview showed:\n%v", name, got.Object, after)
		}
	}
	events, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seven []string
	for _, e := range events.Items {
		if reason, _, _ := unstructured.NestedString(e.Object, "reason"); reason == "Seven" {
			name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
			seven = append(seven, name)
		}
	}
	var previewedEvents []string
	for _, l := range previewed {
		if l.verb == "event" {
			previewedEvents = append(previewedEvents, l.name)
		}
	}
	slices.Sort(seven)
	slices.Sort(previewedEvents)
	if !slices.Equal(seven, previewedEvents) {
		t.Errorf("kreact run recorded events about %v, the preview listed %v", seven, previewedEvents)
	}
}

// TestPreviewAgainstRunningVersion: kreact preview --against shows only
// how an edit changes the actions, object by object, on the same
// objects; a version against itself shows none and exits 0 with
// --exit-code. -l hands the rules only the objects it matches. No
// goroutine of the previews outlives them.
func TestPreviewAgainstRunningVersion(t *testing.T) {
	leaktest.Check(t)
	ctx := t.Context()
	ns := freshNamespace(t, "preview-edit-e2e")
	cms := dynamic.NewForConfigOrDie(cluster.Config()).Resource(configMapsGVR).Namespace(ns)
	for n := range 20 {
		tier := "back"
		if n < 10 {
			tier = "front"
		}
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", n), "namespace": ns, "labels": map[string]any{"tier": tier}},
			"data":     map[string]any{"n": strconv.Itoa(n)}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	running, edited := filepath.Join(dir, "running.yaml"), filepath.Join(dir, "edited.yaml")
	if err := os.WriteFile(running, []byte(fmt.Sprintf(previewRule, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The edit labels multiples of five "five" instead of odd or even
	// (the other objects are patched as before), and records no Event.
	edit := strings.Replace(fmt.Sprintf(previewRule, ns), `parity: n % 2 ? "odd" : "even"`, `parity: n % 5 === 0 ? "five" : n % 2 ? "odd" : "even"`, 1)
	edit = strings.Replace(edit, `if (n % 7 === 0) kreact.event`, `if (false) kreact.event`, 1)
	if err := os.WriteFile(edited, []byte(edit), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(t, "preview", "-f", edited, "--against", running, "-o", "json", "--exit-code", "--kubeconfig", cluster.KubeconfigPath())
	if code != 5 {
		t.Fatalf("kreact preview --against of an edit that changes actions, --exit-code: %s", transcript(code, stdout, stderr))
	}
	var doc struct {
		Handed  int
		Same    bool
		Objects []struct {
			Name           string
			Removed, Added []struct {
				Action map[string]any
				Diff   string
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// By the rule's logic: 5 is labelled five, not odd (10 is a multiple
	// of ten, left alone; 15 of three, applied); 7 and 14 lose their
	// Event.
	got := map[string]string{}
	for _, o := range doc.Objects {
		var s []string
		for _, a := range o.Removed {
			s = append(s, "-"+fmt.Sprint(a.Action["verb"]))
			if a.Action["verb"] == "patch" && !strings.Contains(a.Diff, "+    parity: odd") {
				t.Errorf("%s: the running version's patch has the diff\n%s", o.Name, a.Diff)
			}
		}
		for _, a := range o.Added {
			s = append(s, "+"+fmt.Sprint(a.Action["verb"]))
			if !strings.Contains(a.Diff, "+    parity: five") {
				t.Errorf("%s: the edit's patch has the diff\n%s", o.Name, a.Diff)
			}
		}
		got[o.Name] = strings.Join(s, " ")
	}
	want := map[string]string{"cm-05": "-patch +patch", "cm-07": "-event", "cm-14": "-event"}
	if doc.Handed != 20 || doc.Same || !reflect.DeepEqual(got, want) {
		t.Errorf("handed %d, same %v, differences %v; want 20, false, %v", doc.Handed, doc.Same, got, want)
	}

	code, stdout, stderr = run(t, "preview", "-f", running, "--against", running, "-l", "tier=front", "--exit-code", "--kubeconfig", cluster.KubeconfigPath())
	if code != exitOK || !strings.HasPrefix(stdout, "the new version takes the same 10 actions as the running one, for 10 objects handed to the rules") {
		t.Errorf("kreact preview of a version against itself, -l tier=front: %s", transcript(code, stdout, stderr))
	}
	code, stdout, stderr = run(t, "preview", "-f", edited, "--against", running, "-l", "tier=front", "--kubeconfig", cluster.KubeconfigPath())
	for _, line := range []string{"configmaps " + ns + "/cm-05\n  - patch (merge)  (rule previewed, ", "      +    parity: odd\n", "  + patch (merge)", "      +    parity: five\n",
		"configmaps " + ns + "/cm-07\n  - event Normal Seven: a multiple of seven: 7  (rule previewed, ",
		"2 objects differ: 2 actions only by the running version, 1 action only by the new one, for 10 objects handed to the rules; nothing was changed\n"} {
		if code != exitOK || !strings.Contains(stdout, line) {
			t.Errorf("kreact preview --against without --exit-code does not print %q: %s", line, transcript(code, stdout, stderr))
		}
	}
}

// TestPreviewAsATeam: a team whose ServiceAccount may read its
// namespace's ConfigMaps but not patch them sees, before it applies the
// rule, that each patch would be refused, and why; one that may not even
// list them is told so, and the preview fails rather than show nothing.
func TestPreviewAsATeam(t *testing.T) {
	ctx := t.Context()
	ns := freshNamespace(t, "preview-team-e2e")
	kube := typedClient(t)
	for _, sa := range []string{"reader", "nobody"} {
		if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-01"}, Data: map[string]string{"n": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rule := filepath.Join(t.TempDir(), "rule.yaml")
	if err := os.WriteFile(rule, []byte(fmt.Sprintf(previewRule, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	reader := writeKubeconfig(t, serviceAccountConfig(t, ns, "reader"))
	readerClient := dynamic.NewForConfigOrDie(serviceAccountConfig(t, ns, "reader"))
	testcluster.Eventually(t, "the reader to be allowed to list configmaps", func() bool {
		_, err := readerClient.Resource(configMapsGVR).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})

	code, stdout, stderr := run(t, "preview", "-f", rule, "--kubeconfig", reader)
	for _, want := range []string{
		"configmaps " + ns + "/cm-01\n  patch (merge)  (rule previewed, ",
		"\n      refused by the API server: patch configmaps " + ns + "/cm-01: ",
		`configmaps "cm-01" is forbidden: User "system:serviceaccount:` + ns + `:reader" cannot patch resource "configmaps"`,
		"\n1 action on 1 object, for 1 object handed to the rules; nothing was changed\n",
	} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("kreact preview as a ServiceAccount that may not patch does not print %q: %s", want, transcript(code, stdout, stderr))
		}
	}

	code, stdout, stderr = run(t, "preview", "-f", rule, "--kubeconfig", writeKubeconfig(t, serviceAccountConfig(t, ns, "nobody")))
	if code != 1 || stdout != "" || !strings.Contains(stderr, `kreact: rule previewed: forbidden: cannot list configmaps in namespace "`+ns+`"`) {
		t.Errorf("kreact preview as a ServiceAccount that may not list: %s", transcript(code, stdout, stderr))
	}
}

// TestPreviewRefusesWhatValidateRefuses: a rule set with a rule that
// kreact validate refuses (here, a resource the cluster does not serve)
// is not previewed, and the error is printed at its position, exit code
// 3, as kreact record does.
func TestPreviewRefusesWhatValidateRefuses(t *testing.T) {
	ns := freshNamespace(t, "preview-refused-e2e")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "previewed.yaml"), []byte(fmt.Sprintf(previewRule, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	gizmos := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: gizmos
spec:
  watch:
    - resource: gizmos.preview.kreact.test
  script: |
    function onAdd(obj, ctx) {}
`
	if err := os.WriteFile(filepath.Join(dir, "gizmos.yaml"), []byte(gizmos), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "preview", "-f", dir, "--kubeconfig", cluster.KubeconfigPath())
	if want := filepath.Join(dir, "gizmos.yaml") + `:7:17: spec.watch[0].resource: "gizmos.preview.kreact.test": no such resource`; code != 3 || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("kreact preview of a rule set kreact validate refuses, want exit 3 and %q: %s", want, transcript(code, stdout, stderr))
	}
}
