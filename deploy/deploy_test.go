//go:build e2e

package deploy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

const serviceAccount = "system:serviceaccount:kreact-system:kreact"

// kubectl runs bin/kubectl (built by `make controlplane`) against the test
// cluster and returns its combined output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("KREACT_BIN_DIR")
	if bin == "" {
		bin = filepath.Join("..", "bin")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// A cache of its own: kubectl caches discovery under $HOME otherwise.
	args = append(args, "--kubeconfig", cluster.KubeconfigPath(), "--cache-dir", t.TempDir())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestKustomizationAppliesToTheAPIServer(t *testing.T) {
	// A server-side dry run creates nothing, so the namespaced objects of
	// the same dry run would be refused for want of their Namespace. The
	// Namespace is applied for real first; everything is then dry-run
	// (the Namespace included, as unchanged), validated by the API server
	// with its admission (Pod Security "restricted" on kreact-system).
	mustKubectl(t, "apply", "-f", "namespace.yaml")
	// The rule objects' CRDs, as a fresh cluster has them: not yet (the
	// tests share a cluster, and another test may have installed them
	// otherwise, which kubectl apply would warn about).
	mustKubectl(t, "delete", "-f", "crds/", "--ignore-not-found", "--wait")
	out := mustKubectl(t, "apply", "-k", ".", "--dry-run=server")
	for _, want := range []string{
		"namespace/kreact-system",
		"serviceaccount/kreact",
		"role.rbac.authorization.k8s.io/kreact-leader-election",
		"clusterrole.rbac.authorization.k8s.io/kreact",
		"rolebinding.rbac.authorization.k8s.io/kreact-leader-election",
		"clusterrolebinding.rbac.authorization.k8s.io/kreact",
		"clusterrole.rbac.authorization.k8s.io/kreact-rule-objects",
		"role.rbac.authorization.k8s.io/kreact-admission-ca",
		"configmap/kreact-rules-",
		"service/kreact-metrics",
		"service/kreact-admission",
		"deployment.apps/kreact",
		"poddisruptionbudget.policy/kreact",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run did not report %s:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "(server dry run)") {
		t.Errorf("not a server dry run:\n%s", out)
	}
	if strings.Contains(out, "Warning") || strings.Contains(out, "PodSecurity") {
		t.Errorf("the API server warned:\n%s", out)
	}

	// Applied for real, the RBAC must give kreact's ServiceAccount what the
	// rules and kreact itself need, and no more than that.
	mustKubectl(t, "apply", "-k", ".")
	// kubectl resolves the resources it asks about through discovery: the
	// examples' custom resource must be served.
	backups := testcluster.CRD{Group: "demo.kreact.dev", Kind: "Backup", Plural: "backups", ShortNames: []string{"bk"}}
	if err := testcluster.CreateCRD(t.Context(), dynamic.NewForConfigOrDie(cluster.Config()), backups); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"list", "customresourcedefinitions.apiextensions.k8s.io"}, true},
		{[]string{"watch", "apiservices.apiregistration.k8s.io"}, true},
		{[]string{"patch", "namespaces"}, true},
		{[]string{"watch", "namespaces"}, true},
		// deploy/rules holds one rule, which patches namespaces: what the
		// examples would need is not granted until their rules are mounted.
		{[]string{"patch", "networkpolicies.networking.k8s.io", "-n", "team-a"}, false},
		{[]string{"delete", "configmaps", "-n", "team-a"}, false},
		{[]string{"patch", "deployments.apps", "-n", "team-a"}, false},
		{[]string{"patch", "backups.demo.kreact.dev", "--subresource=status", "-n", "team-a"}, false},
		{[]string{"update", "leases.coordination.k8s.io", "-n", "kreact-system"}, true},
		{[]string{"create", "leases.coordination.k8s.io", "-n", "kreact-system"}, true},
		{[]string{"update", "leases.coordination.k8s.io", "-n", "kube-system"}, false},
		{[]string{"get", "secrets", "-n", "team-a"}, false},
		{[]string{"delete", "secrets", "-n", "team-a"}, false},
		{[]string{"delete", "namespaces"}, false},
		{[]string{"delete", "pods", "-n", "team-a"}, false},
		// --admission-validate-rules (rule-objects.yaml): its webhook
		// configuration and the CA Secret, nothing else of either.
		{[]string{"patch", "validatingwebhookconfigurations.admissionregistration.k8s.io/kreact-rule-objects"}, true},
		{[]string{"patch", "validatingwebhookconfigurations.admissionregistration.k8s.io/kreact"}, false},
		{[]string{"get", "secrets/kreact-admission-ca", "-n", "kreact-system"}, true},
		{[]string{"get", "secrets/other", "-n", "kreact-system"}, false},
	} {
		args := append([]string{"auth", "can-i"}, c.args...)
		args = append(args, "--as", serviceAccount)
		out, err := kubectl(t, args...)
		// The answer is the last line; warnings (a CRD not installed) come before.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		answer := strings.TrimSpace(lines[len(lines)-1])
		if answer != "yes" && answer != "no" {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		got := answer == "yes"
		if got != c.want {
			t.Errorf("kreact can %s: %v, want %v\n%s", strings.Join(c.args, " "), got, c.want, out)
		}
	}

	// The Deployment runs the generated ConfigMap's rules with leader
	// election, and mounts the ConfigMap under its hashed name.
	args := mustKubectl(t, "get", "deployment", "kreact", "-n", "kreact-system", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
	for _, want := range []string{`"--leader-elect"`, `"-f=/etc/kreact/rules"`, `"--health-probe-bind-address=:8081"`, `"--admission-ca-secret=kreact-admission-ca"`, `"--admission-validate-rules"`} {
		if !strings.Contains(args, want) {
			t.Errorf("deployment args %s lack %s", args, want)
		}
	}
	cm := mustKubectl(t, "get", "deployment", "kreact", "-n", "kreact-system", "-o", "jsonpath={.spec.template.spec.volumes[0].configMap.name}")
	mustKubectl(t, "get", "configmap", cm, "-n", "kreact-system")
}
