//go:build e2e

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/kreact/kreact/internal/testcluster"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// buildKreact builds the kreact binary once per test binary, into the
// test cluster's folder (removed with it), for tests that need real
// processes (signals, process priorities, leader failover), and returns
// its path.
func buildKreact(t *testing.T) string {
	t.Helper()
	bin, err := builtKreact()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var builtKreact = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(cluster.Dir(), "kreact")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kreact: %w\n%s", err, out)
	}
	return bin, nil
})

// kreactProcess is a kreact process started by a test; it is killed when
// the test ends, and its log is printed if the test failed.
type kreactProcess struct {
	cmd    *exec.Cmd
	stderr *testcluster.LogBuffer
	// wait is cmd.Wait, once; any number of callers get its result.
	wait func() error
}

// startKreact starts `kreact ARGS...` against the test cluster.
func startKreact(t *testing.T, args ...string) *kreactProcess {
	t.Helper()
	p := &kreactProcess{stderr: &testcluster.LogBuffer{}}
	p.cmd = exec.Command(buildKreact(t), append(args, "--kubeconfig", cluster.KubeconfigPath())...)
	p.cmd.Stderr = p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.wait = sync.OnceValue(p.cmd.Wait)
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.wait()
		if t.Failed() {
			t.Logf("kreact %v stderr:\n%s", args, p.stderr)
		}
	})
	return p
}

// exited returns a channel that receives the process's exit.
func (p *kreactProcess) exited() <-chan error {
	c := make(chan error, 1)
	go func() { c <- p.wait() }()
	return c
}

// ensureNamespace creates namespace ns on the test cluster unless it exists.
func ensureNamespace(t *testing.T, dyn dynamic.Interface, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
