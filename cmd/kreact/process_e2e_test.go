//go:build e2e

package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
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
	// wait waits for the process to exit; any number of callers get the
	// result of cmd.Wait.
	wait func() error
}

// startKreact starts `kreact ARGS...` against the test cluster.
func startKreact(t *testing.T, args ...string) *kreactProcess {
	t.Helper()
	return startBinary(t, buildKreact(t), args...)
}

// startBinary starts `BIN ARGS...`, a kreact binary built some other way,
// against the test cluster.
func startBinary(t *testing.T, bin string, args ...string) *kreactProcess {
	t.Helper()
	p := &kreactProcess{stderr: &testcluster.LogBuffer{}}
	p.cmd = exec.Command(bin, append(args, "--kubeconfig", cluster.KubeconfigPath())...)
	p.cmd.Stderr = p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The kernel sends the parent-death signal when the thread that
	// started the child ends, not the process, and this process ends
	// threads: internal/testcluster starts kube-apiserver from a locked
	// thread that ends with it, so a test that restarts the API server
	// would kill kreact. So kreact, too, is started from a thread locked
	// to the goroutine that waits for it, which lives as long as kreact.
	started := make(chan error)
	done := make(chan struct{})
	var waitErr error
	go func() {
		runtime.LockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waitErr = p.cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	p.wait = func() error {
		<-done
		return waitErr
	}
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

// terminate sends the process SIGTERM and checks that it exits 0 within
// Kubernetes' default grace period of 30 s.
func (p *kreactProcess) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited():
		if err != nil {
			t.Errorf("kreact exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("kreact did not exit within 30 s of SIGTERM")
	}
}

// wantExit checks that the process exits with code within a minute.
func (p *kreactProcess) wantExit(t *testing.T, code int) {
	t.Helper()
	select {
	case err := <-p.exited():
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != code {
			t.Errorf("kreact exited with %v, want exit code %d", err, code)
		}
	case <-time.After(time.Minute):
		t.Fatal("kreact did not exit within a minute")
	}
}

// annotationOf returns annotation key of ConfigMap ns/name, or "" if it
// cannot be read.
func annotationOf(t *testing.T, dyn dynamic.Interface, ns, name, key string) string {
	cm, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.GetAnnotations()[key]
}

// ensureNamespace creates namespace ns on the test cluster unless it exists.
func ensureNamespace(t *testing.T, dyn dynamic.Interface, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
