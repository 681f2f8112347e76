//go:build e2e

package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/internal/testcluster"
)

// chart is the Helm chart, relative to this folder.
const chart = "../charts/kreact"

// chartNamespace is where the chart's renderings are installed: the
// namespace of deploy/, so that the objects are the same.
const chartNamespace = "kreact-system"

// deployRule is deploy/rules' rule, given to the chart as the README says.
const deployRule = "rules/namespace-labels.yaml"

// helm runs bin/helm (built by `make helm` from hack/helm) with the test
// cluster's kubeconfig, and caches and configuration of its own.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return helmIn(t.Context(), t, args...)
}

// helmIn is helm under ctx, for cleanups, which run after t.Context ends.
func helmIn(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("KREACT_BIN_DIR")
	if bin == "" {
		bin = filepath.Join("..", "bin")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "helm"), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+cluster.KubeconfigPath(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), fmt.Errorf("helm %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// kreactBinary builds cmd/kreact for its rbac command.
func kreactBinary(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "kreact")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", out, "../cmd/kreact").CombinedOutput(); err != nil {
		t.Fatalf("build kreact: %v\n%s", err, b)
	}
	return out
}

// combination is one documented values file, charts/kreact/ci/NAME-values.yaml.
type combination struct {
	name, file string
}

// combinations are the values combinations the chart's README documents:
// every file in its ci/ folder.
func combinations(t *testing.T) []combination {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chart, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values combination in %s/ci (%v)", chart, err)
	}
	var cs []combination
	for _, f := range files {
		cs = append(cs, combination{strings.TrimSuffix(filepath.Base(f), "-values.yaml"), f})
	}
	return cs
}

// rbacCommand is the `kreact rbac` command line the chart prints when
// rbac.generated is missing: the documented way to make it.
var rbacCommand = regexp.MustCompile(`(?m)^\s*(kreact rbac -f RULES .*?) > rbac\.yaml$`)

// generatedRBAC renders the chart without rbac.generated, takes the
// command its error prints, and runs it on the rules: what a user does.
func generatedRBAC(t *testing.T, kreact string, values []string, rules string) string {
	t.Helper()
	args := append([]string{"template", "kreact", chart, "-n", chartNamespace}, values...)
	out, err := helm(t, args...)
	if err == nil {
		t.Fatalf("helm template without rbac.generated succeeded:\n%s", out)
	}
	m := rbacCommand.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("helm template without rbac.generated does not print the kreact rbac command:\n%s", out)
	}
	fields := strings.Fields(m[1])
	fields[3] = rules // RULES
	cmd := exec.CommandContext(t.Context(), kreact, fields[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, stderr.String())
	}
	file := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(file, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// render is the chart rendered with one combination, deploy/rules' rule
// and the RBAC kreact rbac generates for them.
func render(t *testing.T, kreact string, c combination) (manifest string, values []string) {
	t.Helper()
	values = []string{"-f", c.file, "--set-file", "rules.namespace-labels=" + deployRule}
	values = append(values, "--set-file", "rbac.generated="+generatedRBAC(t, kreact, values, deployRule))
	mustHelm(t, append([]string{"lint", chart, "--strict", "-n", chartNamespace}, values...)...)
	// --include-crds: deploy/ applies the CRDs of rule objects as the
	// chart's crds/ installs them.
	return mustHelm(t, append([]string{"template", "kreact", chart, "-n", chartNamespace, "--include-crds"}, values...)...), values
}

// TestChartRendersAndApplies lints and renders every documented values
// combination and applies each rendering with a server-side dry run: the
// API server validates every object, with Pod Security "restricted" on
// the namespace. The Prometheus Operator's and cert-manager's kinds are
// served by minimal CRDs of the same group, version and kind (no schema:
// the API server checks their metadata and that they are served, not
// their fields; the upstream CRDs are not pulled).
func TestChartRendersAndApplies(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	for _, crd := range []testcluster.CRD{
		{Group: "monitoring.coreos.com", Kind: "ServiceMonitor", Plural: "servicemonitors"},
		{Group: "cert-manager.io", Kind: "Certificate", Plural: "certificates"},
		{Group: "cert-manager.io", Kind: "Issuer", Plural: "issuers"},
	} {
		if err := testcluster.CreateCRD(t.Context(), dyn, crd); err != nil {
			t.Fatal(err)
		}
	}
	mustKubectl(t, "apply", "-f", "namespace.yaml")
	kreact := kreactBinary(t)
	for _, c := range combinations(t) {
		t.Run(c.name, func(t *testing.T) {
			manifest, _ := render(t, kreact, c)
			file := filepath.Join(t.TempDir(), "manifest.yaml")
			if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			out := mustKubectl(t, "apply", "--dry-run=server", "-f", file)
			if strings.Contains(out, "Warning") || strings.Contains(out, "PodSecurity") {
				t.Errorf("the API server warned:\n%s", out)
			}
			objs := parseObjects(t, manifest)
			if len(objs) == 0 {
				t.Fatal("the rendering holds no object")
			}
			for _, o := range objs {
				// kubectl names each object KIND[.GROUP]/NAME.
				reported := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(strings.ToLower(o.kind())) + `(\.[-a-z0-9.]+)?/` + regexp.QuoteMeta(o.name()) + ` .*\(server dry run\)$`)
				if !reported.MatchString(out) {
					t.Errorf("the dry run did not report %s %s:\n%s", o.kind(), o.name(), out)
				}
			}
			checkCombination(t, c.name, objs)
		})
	}
}

// checkCombination checks what each combination is for, in its rendering.
func checkCombination(t *testing.T, name string, objs []object) {
	t.Helper()
	kinds := map[string]bool{}
	var dep appsv1.Deployment
	for _, o := range objs {
		kinds[o.kind()] = true
		if o.kind() == "Deployment" {
			o.into(t, &dep)
		}
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	has := func(a string) bool { return slices.Contains(args, a) }
	switch name {
	case "default":
		if !has("--leader-elect") || !has("--admission-ca-secret=kreact-admission-ca") || !kinds["PodDisruptionBudget"] || kinds["ServiceMonitor"] || kinds["NetworkPolicy"] {
			t.Errorf("default: args %q, kinds %v", args, kinds)
		}
	case "shards":
		if !has("--shards") || has("--leader-elect") || *dep.Spec.Replicas != 3 {
			t.Errorf("shards: args %q, replicas %d", args, *dep.Spec.Replicas)
		}
	case "cert-manager":
		for _, a := range []string{"--admission-cert-file=/etc/kreact/admission/tls.crt", "--admission-inject-ca-from=kreact-system/reactor-admission", "--admission-service=reactor-admission", "--leader-elect-name=reactor"} {
			if !has(a) {
				t.Errorf("cert-manager: args %q lack %s", args, a)
			}
		}
		if !kinds["Certificate"] || !kinds["Issuer"] || dep.Name != "reactor" {
			t.Errorf("cert-manager: kinds %v, Deployment %s", kinds, dep.Name)
		}
	case "monitoring":
		if !kinds["ServiceMonitor"] || !kinds["NetworkPolicy"] {
			t.Errorf("monitoring: kinds %v", kinds)
		}
	case "minimal":
		if has("--leader-elect") || !has("--admission-bind-address=") || kinds["PodDisruptionBudget"] || !has("--log-level=debug") ||
			!has("--default-service-account=kreact-rules") || !has("--only-default-service-account") {
			t.Errorf("minimal: args %q, kinds %v", args, kinds)
		}
	default:
		t.Errorf("combination %s: checkCombination does not say what it is for", name)
	}
	// GOMEMLIMIT follows the memory limit in every combination.
	env := dep.Spec.Template.Spec.Containers[0].Env
	if len(env) != 1 || env[0].Name != "GOMEMLIMIT" || env[0].ValueFrom.ResourceFieldRef.Resource != "limits.memory" {
		t.Errorf("%s: env %+v, want GOMEMLIMIT from limits.memory", name, env)
	}
}

// TestChartMatchesDeploy renders the chart with its defaults and
// deploy/rules' rule, and compares it object by object with `kubectl
// kustomize deploy/`; the sharded combination likewise with
// deploy-sharded/. They differ only where Helm must: its own labels
// (instance, managed-by, chart, version), the rules' checksum annotation
// where kustomize hashes the ConfigMap's name, and the Namespace, which
// `helm install --create-namespace` makes (its Pod Security label is the
// README's step).
func TestChartMatchesDeploy(t *testing.T) {
	kreact := kreactBinary(t)
	for _, c := range []struct {
		combination, kustomization string
		// skip are kinds not compared, and why.
		skip map[string]string
	}{
		{"default", ".", nil},
		{"shards", "../deploy-sharded", map[string]string{
			"ServiceAccount":     "RBAC: deploy-sharded keeps the base's leader-election Role beside its shards Role; kreact rbac --shards grants the shards Role alone",
			"Role":               "see ServiceAccount",
			"RoleBinding":        "see ServiceAccount",
			"ClusterRole":        "see ServiceAccount",
			"ClusterRoleBinding": "see ServiceAccount",
		}},
	} {
		t.Run(c.combination, func(t *testing.T) {
			manifest, _ := render(t, kreact, combination{c.combination, filepath.Join(chart, "ci", c.combination+"-values.yaml")})
			got := index(t, parseObjects(t, manifest), c.skip)
			want := index(t, parseObjects(t, mustKubectl(t, "kustomize", c.kustomization)), c.skip)
			delete(want, "Namespace//"+chartNamespace)
			for k := range want {
				if _, ok := got[k]; !ok {
					t.Errorf("%s is in %s, not in the chart's rendering", k, c.kustomization)
				}
			}
			for k, g := range got {
				w, ok := want[k]
				if !ok {
					t.Errorf("%s is in the chart's rendering, not in %s", k, c.kustomization)
					continue
				}
				if d := cmp.Diff(w, g); d != "" {
					t.Errorf("%s differs (-%s +chart):\n%s", k, c.kustomization, d)
				}
			}
		})
	}
}

// index keys objects by kind/namespace/name, normalized for comparison.
func index(t *testing.T, objs []object, skip map[string]string) map[string]map[string]any {
	t.Helper()
	// kustomize's ConfigMap name ends in a hash of its content.
	hashed := regexp.MustCompile(`^(kreact-rules)-[a-z0-9]{10}$`)
	out := map[string]map[string]any{}
	for _, o := range objs {
		if _, ok := skip[o.kind()]; ok {
			continue
		}
		normalize(map[string]any(o), hashed)
		if o.kind() == "CustomResourceDefinition" {
			// Helm installs the chart's crds/ as they are, untemplated:
			// they carry no labels, where kustomize labels everything.
			if md, ok := o["metadata"].(map[string]any); ok {
				delete(md, "labels")
			}
		}
		out[o.kind()+"/"+o.namespace()+"/"+o.name()] = o
	}
	return out
}

// helmOnly are the labels and annotations only the chart sets.
var helmOnly = []string{"app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart", "app.kubernetes.io/version", "checksum/rules"}

func normalize(v any, hashed *regexp.Regexp) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && hashed.MatchString(s) {
				v[k] = hashed.ReplaceAllString(s, "$1")
			}
			normalize(x, hashed)
			for _, l := range helmOnly {
				if k == "labels" || k == "annotations" || k == "matchLabels" || k == "selector" {
					if m, ok := x.(map[string]any); ok {
						delete(m, l)
					}
				}
			}
			if m, ok := x.(map[string]any); ok && len(m) == 0 && (k == "labels" || k == "annotations") {
				delete(v, k)
			}
		}
	case []any:
		for _, x := range v {
			normalize(x, hashed)
		}
	}
}

// object is one object of a multi-document manifest.
type object map[string]any

func (o object) kind() string { s, _ := o["kind"].(string); return s }
func (o object) meta(k string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[k].(string)
	return s
}
func (o object) name() string      { return o.meta("name") }
func (o object) namespace() string { return o.meta("namespace") }

// into decodes the object into a typed one, refusing unknown fields.
func (o object) into(t *testing.T, v any) {
	t.Helper()
	data, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s %s: %v", o.kind(), o.name(), err)
	}
}

func parseObjects(t *testing.T, manifest string) []object {
	t.Helper()
	var objs []object
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(manifest, -1) {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if o.kind() != "" {
			objs = append(objs, o)
		}
	}
	return objs
}

// TestChartValuesTypoFails: a key the schema does not know, at the top
// or nested, fails helm template and helm install with the schema's
// message, which names the key; nothing is installed.
func TestChartValuesTypoFails(t *testing.T) {
	base := []string{"--set-file", "rules.namespace-labels=" + deployRule, "--set-file", "rbac.generated=rbac.yaml"}
	for _, c := range []struct{ set, key string }{
		{"replicaCount=3", "replicaCount"},
		{"image.tags=v1", "tags"},
		{"serviceMonitor.enable=true", "enable"},
	} {
		t.Run(c.key, func(t *testing.T) {
			for _, cmd := range [][]string{
				{"template", "kreact", chart, "-n", chartNamespace},
				{"install", "typo", chart, "-n", "kreact-typo", "--create-namespace", "--dry-run=server"},
			} {
				args := append(append(cmd, base...), "--set", c.set)
				out, err := helm(t, args...)
				if err == nil {
					t.Fatalf("helm %s with --set %s succeeded", cmd[0], c.set)
				}
				if !strings.Contains(out, "values don't meet the specifications of the schema") || !strings.Contains(out, "additional properties '"+c.key+"' not allowed") {
					t.Errorf("helm %s with --set %s failed without the schema's message:\n%s", cmd[0], c.set, out)
				}
			}
		})
	}
}

// The README's cluster quickstart, as a user types it from the
// repository root (the test checks README.md holds these lines).
const (
	quickstartRBAC    = "bin/kreact rbac -f examples/namespace-defaults.yaml --leader-elect --admission-ca-secret kreact-admission-ca --create-namespace=false -n kreact-system > rbac.yaml"
	quickstartInstall = `bin/helm install kreact charts/kreact -n kreact-system --create-namespace \
    --set image.repository=REGISTRY/kreact,image.tag=TAG \
    --set-file rules.namespace-defaults=examples/namespace-defaults.yaml --set-file rbac.generated=rbac.yaml`
	// quickstartNamespace replaces kreact-system in the test: the other
	// tests apply deploy/ there, outside any Helm release.
	quickstartNamespace = "kreact-quickstart"
)

// TestChartQuickstart takes the README's cluster quickstart against the
// real API server: kreact rbac for the rule, helm install with it. There
// is no kubelet, so the release's Pods stay Pending; the test checks the
// objects are there, then runs the container image with podman as the
// installed Deployment's Pod would run (with its arguments, environment,
// security context, probes and the installed ConfigMap's rule), and
// checks that the rule reacts to a new namespace.
func TestChartQuickstart(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{quickstartRBAC, quickstartInstall} {
		if !strings.Contains(string(readme), "$ "+line) {
			t.Fatalf("README.md's quickstart does not hold:\n$ %s", line)
		}
	}
	image := imageUnderTest(t)
	kreact := kreactBinary(t)

	words := func(line string) []string {
		line = strings.ReplaceAll(line, "\\\n", " ")
		line = strings.ReplaceAll(line, "kreact-system", quickstartNamespace)
		return strings.Fields(line)
	}
	rbacArgs := words(strings.TrimSuffix(quickstartRBAC, " > rbac.yaml"))
	cmd := exec.CommandContext(t.Context(), kreact, rbacArgs[1:]...)
	cmd.Dir = ".."
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", quickstartRBAC, err, stderr.String())
	}
	rbacFile := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(rbacFile, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var install []string
	for _, w := range words(quickstartInstall)[2:] { // after "bin/helm install"
		switch {
		case w == "charts/kreact":
			w = chart
		case w == "rbac.generated=rbac.yaml":
			w = "rbac.generated=" + rbacFile
		case strings.HasPrefix(w, "rules.") && strings.Contains(w, "=examples/"):
			w = strings.Replace(w, "=examples/", "=../examples/", 1)
		}
		install = append(install, w)
	}
	mustHelm(t, append([]string{"install"}, install...)...)
	t.Cleanup(func() {
		if out, err := helmIn(context.Background(), t, "uninstall", "kreact", "-n", quickstartNamespace); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	status := mustHelm(t, "status", "kreact", "-n", quickstartNamespace)
	if !strings.Contains(status, "STATUS: deployed") {
		t.Errorf("helm status:\n%s", status)
	}
	for _, obj := range []string{"serviceaccount/kreact", "configmap/kreact-rules", "deployment/kreact", "service/kreact-metrics", "service/kreact-admission", "poddisruptionbudget/kreact", "role/kreact-leader-election", "rolebinding/kreact-leader-election"} {
		mustKubectl(t, "get", obj, "-n", quickstartNamespace)
	}
	mustKubectl(t, "get", "clusterrole/kreact", "clusterrolebinding/kreact")

	client := kubernetes.NewForConfigOrDie(cluster.Config())
	dep, err := client.AppsV1().Deployments(quickstartNamespace).Get(t.Context(), "kreact", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := client.CoreV1().ConfigMaps(quickstartNamespace).Get(t.Context(), "kreact-rules", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string][]byte{}
	for k, v := range cm.Data {
		rules[k] = []byte(v)
	}
	runLikeAPod(t, image, podUnderTest{
		namespace: quickstartNamespace,
		dep:       dep,
		rules:     map[string]map[string][]byte{cm.Name: rules},
		// examples/namespace-defaults.yaml labels every new namespace.
		reacted: func(ns *corev1.Namespace) bool { return ns.Labels["kreact.dev/managed"] == "true" },
	})
}

// TestChartRefusals: what the schema cannot say, the templates refuse,
// each with a message that says what to do.
func TestChartRefusals(t *testing.T) {
	kreact := kreactBinary(t)
	rbacFor := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), kreact, append([]string{"rbac", "-f", deployRule}, args...)...).Output()
		if err != nil {
			t.Fatalf("kreact rbac %s: %v", strings.Join(args, " "), err)
		}
		file := filepath.Join(t.TempDir(), "rbac.yaml")
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	rule := "rules.namespace-labels=" + deployRule
	roleOnly := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(roleOnly, []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: kreact\nrules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no rule", []string{"--set-file", "rbac.generated=rbac.yaml"},
			"no rule: give at least one rule file with --set-file rules.NAME=FILE"},
		{"no RBAC", []string{"--set-file", rule},
			"kreact rbac -f RULES --name kreact --namespace kreact-system --create-namespace=false --leader-elect --admission-ca-secret kreact-admission-ca > rbac.yaml"},
		{"RBAC of another namespace", []string{"--set-file", rule, "--set-file", "rbac.generated=" + rbacFor("--leader-elect", "--create-namespace=false", "-n", "elsewhere")},
			"rbac.generated is for the ServiceAccount elsewhere/kreact, the release runs as kreact-system/kreact"},
		{"RBAC of another name", []string{"--set-file", rule, "--set-file", "rbac.generated=" + rbacFor("--leader-elect", "--create-namespace=false", "--name", "reactor")},
			"rbac.generated is for the ServiceAccount kreact-system/reactor"},
		{"RBAC with its Namespace", []string{"--set-file", rule, "--set-file", "rbac.generated=" + rbacFor("--leader-elect")},
			"rbac.generated holds a Namespace: generate it with kreact rbac --create-namespace=false"},
		{"not RBAC", []string{"--set-file", rule, "--set-file", "rbac.generated=" + deployRule},
			"rbac.generated holds a Rule: only the ServiceAccount, roles and bindings that kreact rbac prints belong there"},
		{"RBAC without its ServiceAccount", []string{"--set-file", rule, "--set-file", "rbac.generated=" + roleOnly},
			"rbac.generated holds no ServiceAccount"},
		{"leader election and shards", []string{"--set-file", rule, "--set-file", "rbac.generated=rbac.yaml", "--set", "shards.enabled=true"},
			"leaderElection.enabled and shards.enabled exclude each other"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", "kreact", chart, "-n", chartNamespace}, c.args...)...)
			if err == nil {
				t.Fatalf("helm template succeeded:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("helm template failed without %q:\n%s", c.want, out)
			}
		})
	}
}

// TestChartRulesConfigMap: each value under rules is a file of the
// ConfigMap (.yaml added to a bare name, a script file kept as named), and
// the pods' checksum changes with the rules, so that helm upgrade rolls
// them.
func TestChartRulesConfigMap(t *testing.T) {
	script := filepath.Join(t.TempDir(), "check.js")
	if err := os.WriteFile(script, []byte("function onAdd(obj) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered := func(extra ...string) (data map[string]string, checksum string) {
		t.Helper()
		args := append([]string{"template", "kreact", chart, "-n", chartNamespace,
			"--set-file", "rules.namespace-labels=" + deployRule, "--set-file", "rbac.generated=rbac.yaml"}, extra...)
		for _, o := range parseObjects(t, mustHelm(t, args...)) {
			switch o.kind() {
			case "ConfigMap":
				var cm corev1.ConfigMap
				o.into(t, &cm)
				data = cm.Data
			case "Deployment":
				var dep appsv1.Deployment
				o.into(t, &dep)
				checksum = dep.Spec.Template.Annotations["checksum/rules"]
			}
		}
		return data, checksum
	}
	data, sum := rendered()
	rule, err := os.ReadFile(deployRule)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1 || data["namespace-labels.yaml"] != string(rule) {
		t.Errorf("ConfigMap data %v, want namespace-labels.yaml with deploy/rules' rule", data)
	}
	withScript, sum2 := rendered("--set-file", `rules.check\.js=`+script)
	if withScript["check.js"] != "function onAdd(obj) {}\n" || len(withScript) != 2 {
		t.Errorf("ConfigMap data %v, want check.js beside the rule", withScript)
	}
	if sum == "" || sum == sum2 {
		t.Errorf("checksum/rules %q, then %q with one more file: want a change", sum, sum2)
	}
}
