//go:build e2e

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUpServesKubectlAndDownStopsIt runs the CLI as people do: `up` writes
// a kubeconfig that kubectl can use, and `down` stops it.
func TestUpServesKubectlAndDownStopsIt(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "cluster")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	up := exec.Command(bin, "up", "--dir", dir, "--no-controller-manager")
	up.Env = append(os.Environ(), "KREACT_BIN_DIR="+filepath.Join(root, "bin"))
	up.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if strings.Contains(s.Text(), "control plane ready") {
				ready <- s.Text()
			}
		}
		exited <- up.Wait()
	}()
	defer func() { _ = up.Process.Kill() }()
	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("up exited before it was ready: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("up not ready after 2 minutes")
	}

	kubeconfig := filepath.Join(dir, "kubeconfig")
	out, err := exec.Command(filepath.Join(root, "bin", "kubectl"), "--kubeconfig", kubeconfig, "get", "ns").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kube-system") {
		t.Fatalf("kubectl get ns: %v\n%s", err, out)
	}

	if out, err := exec.Command(bin, "down", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("up still running after down")
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster.pid")); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}
