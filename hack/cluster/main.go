package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kreact/kreact/internal/testcluster"
)

func main() {
	fs := flag.NewFlagSet("cluster", flag.ExitOnError)
	dir := fs.String("dir", ".kreact-dev", "folder for the cluster's data, logs, credentials and kubeconfig")
	noKCM := fs.Bool("no-controller-manager", false, "start etcd and kube-apiserver only")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cluster [flags] up|down\n\n  up    start a local control plane and keep it running until Ctrl-C\n  down  stop the control plane started by up\n\nflags:\n")
		fs.PrintDefaults()
	}
	args := os.Args[1:]
	// Accept flags before or after the verb.
	verb := ""
	for i, a := range args {
		if a == "up" || a == "down" {
			verb = a
			args = append(args[:i:i], args[i+1:]...)
			break
		}
	}
	_ = fs.Parse(args)
	var err error
	switch verb {
	case "up":
		err = up(*dir, !*noKCM)
	case "down":
		err = down(*dir)
	default:
		fs.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func up(dir string, controllerManager bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	pidFile := filepath.Join(dir, "cluster.pid")
	if pid, ok := runningPid(pidFile); ok {
		return fmt.Errorf("a control plane is already running (pid %d); run `go run ./hack/cluster down` first", pid)
	}
	// Every `up` starts from an empty etcd, so the demo is repeatable.
	if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver...")
	start := time.Now()
	c, err := testcluster.Start(testcluster.Options{Dir: dir, ControllerManager: controllerManager})
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidFile)
	rel, _ := filepath.Rel(mustGetwd(), c.KubeconfigPath())
	fmt.Printf(`control plane ready in %s
  kubeconfig: %s
  try:        bin/kubectl --kubeconfig %s get ns
  or:         export KUBECONFIG=%s
  logs:       %s/*.log
stop with Ctrl-C or `+"`go run ./hack/cluster down`"+`
`, time.Since(start).Round(100*time.Millisecond), rel, rel, c.KubeconfigPath(), dir)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping the control plane...")
	return nil
}

func down(dir string) error {
	pidFile := filepath.Join(dir, "cluster.pid")
	pid, ok := runningPid(pidFile)
	if !ok {
		return errors.New("no control plane is running (no live pid in " + pidFile + ")")
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	for range 300 {
		if syscall.Kill(pid, 0) != nil {
			fmt.Println("control plane stopped")
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pid %d did not stop within 30s", pid)
}

// runningPid reads a pid file and reports whether that process is alive.
func runningPid(path string) (int, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
