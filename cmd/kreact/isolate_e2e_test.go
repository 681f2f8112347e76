//go:build e2e

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/idleprio"
	"github.com/kreact/kreact/internal/testcluster"
)

// annotatingRule is a rule that sets annotation NAME=yes on every new
// ConfigMap of ns, with extra spec lines.
func annotatingRule(name, ns, extra string) string {
	return `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ` + name + `
spec:
  watch:
    - resource: configmaps
      namespaces: [` + ns + `]
  events: [add]
  permissions:
    - {resources: [configmaps], verbs: [patch]}
` + extra + `  script: |
    function onAdd(obj) {
      kreact.patch(obj, {metadata: {annotations: {"` + name + `": "yes"}}});
    }
`
}

// TestIsolatedRuleRunsInAChildAtIdlePriority runs a real kreact process
// with two rules, one of them isolated: both act, the isolated one from a
// second kreact process whose every thread is at the idle CPU priority,
// which dies when the first is killed.
func TestIsolatedRuleRunsInAChildAtIdlePriority(t *testing.T) {
	const ns = "isolate-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rules.yaml"), annotatingRule("plain", ns, "")+"---\n"+annotatingRule("apart", ns, "  isolate: true\n"))
	metricsAddr := testcluster.FreeAddr(t)
	k := startKreact(t, "run", "-f", dir, "--isolated-metrics-bind-address", metricsAddr)
	stderr := k.stderr

	var child int
	started := regexp.MustCompile(`started their kreact process at idle CPU priority" pid=(\d+)`)
	testcluster.Eventually(t, "the isolated rules' process to start", func() bool {
		m := started.FindStringSubmatch(stderr.String())
		if m != nil {
			child, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	testcluster.Eventually(t, "the isolated process to sync its one rule", func() bool {
		return stderr.Count("caches synced", "isolated=true") > 0
	})

	createNamespacedConfigMap(t, dyn, ns, "both")
	testcluster.Eventually(t, "both rules to annotate the ConfigMap", func() bool {
		return annotationOf(t, dyn, ns, "both", "plain") == "yes" && annotationOf(t, dyn, ns, "both", "apart") == "yes"
	})
	// The isolated process serves its own metrics.
	testcluster.Eventually(t, "the isolated process's metrics to count the call of rule apart", func() bool {
		_, body := testcluster.HTTPGet(t, "http://"+metricsAddr+"/metrics")
		return strings.Contains(body, "kreact_rules_loaded 1") && strings.Contains(body, `kreact_handler_calls_total{event="add",rule="apart"} 1`)
	})
	if n := stderr.Count(`msg="rules loaded"`, "isolated=true", "rules=1"); n != 1 {
		t.Errorf("the isolated process logged %d \"rules loaded\" lines with rules=1, want 1", n)
	}
	if n := stderr.Count(`msg="rules loaded"`, "rules=1"); n != 2 {
		t.Errorf("%d \"rules loaded\" lines with rules=1, want 2: one rule in each process", n)
	}

	// Every thread of the child, those started later included, is idle.
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(child), "task"))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		demoted, err := idleprio.Demoted(tid)
		if err != nil {
			continue // the thread has ended
		}
		if !demoted {
			t.Errorf("thread %d of the isolated process runs neither at SCHED_IDLE nor at nice 19", tid)
		}
	}
	if len(tasks) < 2 {
		t.Errorf("the isolated process has %d threads; a Go program has several", len(tasks))
	}

	_ = k.cmd.Process.Kill()
	_ = k.wait()
	testcluster.Eventually(t, "the isolated process to die with its parent", func() bool {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(child), "stat"))
		// A child reparented to a process that does not reap it stays a
		// zombie: dead all the same.
		return err != nil || strings.Contains(string(stat), ") Z ")
	})
}

// TestIsolatedProcessStopsWithItsParent: on SIGTERM, kreact stops its
// isolated rules' process before it exits 0 itself.
func TestIsolatedProcessStopsWithItsParent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rules.yaml"), annotatingRule("apart", "isolate-stop-e2e", "  isolate: true\n"))
	k := startKreact(t, "run", "-f", dir)
	stderr := k.stderr
	testcluster.Eventually(t, "the isolated process to sync", func() bool {
		return stderr.Count("caches synced", "isolated=true") > 0
	})
	k.terminate(t)
	if n := stderr.Count(`msg=stopped`, "isolated=true"); n != 1 {
		t.Errorf("the isolated process logged %d \"stopped\" lines, want 1: it was not stopped before its parent exited", n)
	}
	if n := stderr.Count("their kreact process exited"); n != 0 {
		t.Error("the supervisor took the stop for a crash")
	}
}

// TestEditMovesARuleToTheIsolatedProcess: kreact starts with no isolated
// rule, so no second process; an edit that isolates the rule starts that
// process, which takes the rule over, while kreact stops running it.
func TestEditMovesARuleToTheIsolatedProcess(t *testing.T) {
	const ns = "isolate-edit-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, file, annotatingRule("mover", ns, ""))
	k := startKreact(t, "run", "-f", file, "--reload-interval", "200ms")
	testcluster.Eventually(t, "kreact to sync", func() bool { return k.stderr.Count("caches synced") > 0 })
	if k.stderr.Count("started their kreact process") != 0 {
		t.Fatal("an isolated process started with no isolated rule")
	}

	writeFile(t, file, annotatingRule("mover", ns, "  isolate: true\n"))
	testcluster.Eventually(t, "the isolated process to start and sync the rule", func() bool {
		return k.stderr.Count("caches synced", "isolated=true") > 0
	})
	// kreact's own line counts the isolated rules as its isolated process
	// last said, which may be before or after it started the rule.
	testcluster.Eventually(t, "kreact to stop running the rule", func() bool {
		return k.stderr.Count(`msg="rules reloaded"`, "rules=0 isolatedRules=") > 0
	})
	if n := k.stderr.Count(`msg="rules loaded"`, "isolated=true", "rules=1"); n != 1 {
		t.Errorf("the isolated process logged %d \"rules loaded\" lines with rules=1, want 1", n)
	}
	createNamespacedConfigMap(t, dyn, ns, "moved")
	testcluster.Eventually(t, "the isolated process to annotate the ConfigMap", func() bool {
		return annotationOf(t, dyn, ns, "moved", "mover") == "yes"
	})
}

// TestIsolatedRulesAreRefusedWithShards: with --shards, an isolated rule
// is an error at the rule, and kreact exits 3 when it is the only one.
func TestIsolatedRulesAreRefusedWithShards(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, file, annotatingRule("apart", "isolate-shards-e2e", "  isolate: true\n"))
	k := startKreact(t, "run", "-f", file, "--shards", "--shard-identity", "iso-a", "--shard-group", "isolate-e2e", "--shard-namespace", "default")
	k.wantExit(t, 3)
	if k.stderr.Count("rule=apart", "spec.isolate: not supported with --shards", "rules.yaml:4:") != 1 {
		t.Errorf("no error at the rule:\n%s", k.stderr)
	}
}

// typoRule is an isolated rule whose resource name is misspelt.
const typoRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: typo
spec:
  isolate: true
  watch:
    - resource: deploymnets
  script: |
    function onAdd(obj) {}
`

// TestIsolatedRuleThatCannotRunExits3: an isolated rule that names no
// resource is the same error as a rule kreact runs itself, found by the
// same check before the rules are split between the processes: when it is
// the only rule, kreact run exits 3 with the rule's position and the
// did-you-mean hint, once, and starts no isolated process.
func TestIsolatedRuleThatCannotRunExits3(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, file, typoRule)
	k := startKreact(t, "run", "-f", file)
	k.wantExit(t, 3)
	want := `rules.yaml:8:17: spec.watch[0].resource: "deploymnets": no such resource; did you mean "deployments"?`
	if k.stderr.Count(want) != 1 {
		t.Errorf("kreact's last line is not the rule's error, once:\n%s", k.stderr)
	}
	if n := k.stderr.Count("started their kreact process"); n != 0 {
		t.Errorf("the isolated process started %d times, want never", n)
	}
}

// TestIsolatedProcessWaitsForAnEdit: beside a rule kreact runs, an
// isolated rule that cannot run is logged and leaves kreact running with
// one rule; its process starts only when the file is fixed, and then
// counts.
func TestIsolatedProcessWaitsForAnEdit(t *testing.T) {
	const ns = "isolate-typo-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "plain.yaml"), annotatingRule("plain", ns, ""))
	typo := filepath.Join(dir, "typo.yaml")
	writeFile(t, typo, typoRule)
	metricsAddr := testcluster.FreeAddr(t)
	k := startKreact(t, "run", "-f", dir, "--reload-interval", "200ms", "--metrics-bind-address", metricsAddr)
	loaded := func(n int) func() bool {
		return func() bool {
			_, body := testcluster.HTTPGet(t, "http://"+metricsAddr+"/metrics")
			return strings.Contains(body, "\nkreact_rules_loaded "+strconv.Itoa(n)+"\n")
		}
	}
	testcluster.Eventually(t, "kreact to run its own rule and count none isolated", func() bool {
		return k.stderr.Count(`msg="rules loaded"`, "rules=1 isolatedRules=0") == 1 && loaded(1)()
	})
	if n := k.stderr.Count(`msg="rules with errors are not running" rule=typo`, `no such resource; did you mean \"deployments\"?`); n != 1 {
		t.Errorf("the isolated rule's error logged %d times, want once:\n%s", n, k.stderr)
	}
	// The ConfigMap shows that kreact works meanwhile.
	createNamespacedConfigMap(t, dyn, ns, "before")
	testcluster.Eventually(t, "kreact's own rule to annotate", func() bool {
		return annotationOf(t, dyn, ns, "before", "plain") == "yes"
	})
	if n := k.stderr.Count("started their kreact process"); n != 0 {
		t.Fatalf("the isolated process started %d times before the edit, want never:\n%s", n, k.stderr)
	}

	writeFile(t, typo, strings.Replace(typoRule, "deploymnets", "deployments", 1))
	testcluster.Eventually(t, "the isolated process to start the fixed rule", func() bool {
		return k.stderr.Count(`msg="rule started"`, "rule=typo", "isolated=true") == 1
	})
	testcluster.Eventually(t, "kreact to count the isolated rule", loaded(2))
	if n := k.stderr.Count("started their kreact process"); n != 1 {
		t.Errorf("the isolated process started %d times, want once", n)
	}
	k.terminate(t)
}

// spinningRule annotates every new ConfigMap of ns like annotatingRule,
// except those whose name starts with "spin", on which it loops until its
// timeout.
func spinningRule(name, ns, extra string) string {
	return strings.Replace(annotatingRule(name, ns, "  timeout: 500ms\n"+extra), "function onAdd(obj) {\n",
		"function onAdd(obj) {\n      if (obj.metadata.name.startsWith(\"spin\")) for (;;) {}\n", 1)
}

// TestMisbehavingRuleMovesToTheIsolatedProcess: a rule not marked isolate
// whose call loops is stopped at kreact's CPU limit and moves to the
// isolated process, which runs it from then on (and its looping call to
// its timeout), while the other rule stays; an edit of the rule brings it
// back.
func TestMisbehavingRuleMovesToTheIsolatedProcess(t *testing.T) {
	const ns = "isolate-move-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	// A timeout long enough that the loop reaches the CPU limit (50ms of
	// CPU) first even on a loaded machine, where the call's thread,
	// demoted to idle priority after 2ms, waits for a CPU.
	spinner := strings.Replace(spinningRule("spinner", ns, ""), "timeout: 500ms", "timeout: 10s", 1)
	writeFile(t, file, annotatingRule("plain", ns, "")+"---\n"+spinner)
	metricsAddr := testcluster.FreeAddr(t)
	k := startKreact(t, "run", "-f", file, "--reload-interval", "200ms", "--isolated-metrics-bind-address", metricsAddr)
	testcluster.Eventually(t, "kreact to sync", func() bool { return k.stderr.Count("caches synced") > 0 })

	createNamespacedConfigMap(t, dyn, ns, "spin-1")
	testcluster.Eventually(t, "the spinning rule to move", func() bool {
		return k.stderr.Count("rule misbehaved; moving it to the isolated rules' process", "rule=spinner", "CPU limit exceeded") == 1
	})
	testcluster.Eventually(t, "kreact to stop running it and the isolated process to start it", func() bool {
		return k.stderr.Count("rule removed; another kreact process runs it", "rule=spinner") == 1 &&
			k.stderr.Count(`msg="rule started"`, "rule=spinner", "isolated=true") == 1
	})
	createNamespacedConfigMap(t, dyn, ns, "after")
	testcluster.Eventually(t, "both rules to annotate a new ConfigMap", func() bool {
		return annotationOf(t, dyn, ns, "after", "plain") == "yes" && annotationOf(t, dyn, ns, "after", "spinner") == "yes"
	})
	testcluster.Eventually(t, "the isolated process to have run the spinner on it", func() bool {
		_, body := testcluster.HTTPGet(t, "http://"+metricsAddr+"/metrics")
		return strings.Contains(body, `kreact_handler_calls_total{event="add",rule="spinner"}`) && !strings.Contains(body, `rule="plain"`)
	})
	testcluster.Eventually(t, "the isolated process to run the looping call to its timeout", func() bool {
		return k.stderr.Count("rule=spinner", "isolated=true", "timed out after 10s") > 0
	})
	if n := k.stderr.Count("rule misbehaved"); n != 1 {
		t.Errorf("%d moves logged, want 1", n)
	}

	// An edit is a new version, which kreact runs itself again: here the
	// loop is fixed. (A new version is replayed spin-1; one that still
	// looped on it would move again, and the isolated process, if it
	// reloaded after that move, would keep the rule.)
	writeFile(t, file, annotatingRule("plain", ns, "")+"---\n"+annotatingRule("spinner", ns, ""))
	testcluster.Eventually(t, "kreact to run the edited rule itself", func() bool {
		return k.stderr.Count(`msg="rules reloaded"`, "rules=2 isolatedRules=") > 0 &&
			k.stderr.Count("rule removed; another kreact process runs it", "rule=spinner", "isolated=true") == 1
	})
	testcluster.Eventually(t, "the edited rule to annotate the ConfigMap it looped on", func() bool {
		return annotationOf(t, dyn, ns, "spin-1", "spinner") == "yes"
	})
	createNamespacedConfigMap(t, dyn, ns, "edited")
	testcluster.Eventually(t, "the edited rule to annotate", func() bool {
		return annotationOf(t, dyn, ns, "edited", "spinner") == "yes"
	})
	if n := k.stderr.Count("rule misbehaved"); n != 1 {
		t.Errorf("%d moves logged, want 1: the fixed version moved", n)
	}
}

// TestIsolateMisbehavingCanBeTurnedOff: with --isolate-misbehaving=false a
// spinning rule stays where it is, and no second process starts.
func TestIsolateMisbehavingCanBeTurnedOff(t *testing.T) {
	const ns = "isolate-off-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, file, spinningRule("spinner", ns, ""))
	k := startKreact(t, "run", "-f", file, "--isolate-misbehaving=false")
	testcluster.Eventually(t, "kreact to sync", func() bool { return k.stderr.Count("caches synced") > 0 })
	createNamespacedConfigMap(t, dyn, ns, "spin-1")
	createNamespacedConfigMap(t, dyn, ns, "spin-2")
	testcluster.Eventually(t, "two calls to time out", func() bool { return k.stderr.Count("rule=spinner", "timed out") >= 2 })
	if k.stderr.Count("rule misbehaved") != 0 || k.stderr.Count("started their kreact process") != 0 {
		t.Errorf("the rule moved:\n%s", k.stderr)
	}
}

// TestFinalizersStayWhenARuleMovesToTheIsolatedProcess: a rule with
// spec.finalizer that an edit isolates keeps its finalizer on the objects
// it watched, and the isolated process runs the onDelete of an object
// deleted after the move.
func TestFinalizersStayWhenARuleMovesToTheIsolatedProcess(t *testing.T) {
	const ns = "isolate-fin-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	rule := func(extra string) string {
		return `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: keeper
spec:
  watch:
    - resource: configmaps
      namespaces: [` + ns + `]
  finalizer: true
  permissions:
    - {resources: [configmaps], verbs: [apply]}
` + extra + `  script: |
    function onDelete(obj) {
      if (obj.metadata.name.startsWith("gone-")) return;
      kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "gone-" + obj.metadata.name, namespace: obj.metadata.namespace}});
    }
`
	}
	writeFile(t, file, rule(""))
	k := startKreact(t, "run", "-f", file, "--reload-interval", "200ms")
	createNamespacedConfigMap(t, dyn, ns, "held")
	hasFinalizer := func() bool {
		cm, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), "held", metav1.GetOptions{})
		return err == nil && slices.Contains(cm.GetFinalizers(), "kreact.dev/keeper")
	}
	testcluster.Eventually(t, "the ConfigMap to carry the finalizer", hasFinalizer)

	writeFile(t, file, rule("  isolate: true\n"))
	testcluster.Eventually(t, "the isolated process to sync the rule", func() bool {
		return k.stderr.Count("caches synced", "isolated=true") > 0 && k.stderr.Count("rule removed; another kreact process runs it", "rule=keeper") == 1
	})
	if !hasFinalizer() || k.stderr.Count("finalizers released") != 0 {
		t.Fatalf("the finalizer was released when the rule moved:\n%s", k.stderr)
	}
	if err := dyn.Resource(configMapsGVR).Namespace(ns).Delete(t.Context(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the isolated process to run onDelete and the ConfigMap to go", func() bool {
		_, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), "held", metav1.GetOptions{})
		_, err2 := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), "gone-held", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && err2 == nil
	})
}
