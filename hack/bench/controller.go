package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// settings are what both controllers get.
type settings struct {
	kubeconfig string
	workers    int
	qps        float64
	burst      int
	// fields, if set, is the kreact rule's spec.watch[].fields (paths
	// separated by commas); the bare controller caches whole objects.
	fields string
	// explain runs kreact with --explain-address (traces kept).
	explain bool
}

// fieldsLine is the rule's fields line, or nothing.
func (s settings) fieldsLine() string {
	if s.fields == "" {
		return ""
	}
	return "      fields: [" + s.fields + "]\n"
}

// describeFields names kreact's projection for the report.
func (s settings) describeFields() string {
	d := "kreact caches whole objects"
	if s.fields != "" {
		d = "kreact's rule has fields: [" + s.fields + "]"
	}
	if s.explain {
		d += ", kreact keeps traces (--explain-address)"
	}
	return d
}

// controller is one running controller process.
type controller struct {
	name string
	cmd  *exec.Cmd
	// ready is closed when the controller has its initial state.
	ready chan struct{}
	// metricsAddr serves kreact's /metrics; empty for the bare controller.
	metricsAddr string
	// pprofAddr serves /debug/pprof/ (both controllers).
	pprofAddr string
	// explainAddr serves kreact explain; empty unless settings.explain.
	explainAddr string
	stdout      *lockedBuffer
	stderr      *lockedBuffer
	// stopped is closed by stop.
	stopped chan struct{}
}

// startKreact runs `kreact run` with the mirror rule on namespace.
func startKreact(bin, dir, namespace string, s settings) (*controller, error) {
	rule := fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: mirror
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
%s  events: [add, update]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  workers: %d
  actionWorkers: %d
  rateLimit: 10000
  burst: 100000
  script: |
    function mirror(obj) {
      const seq = (obj.data || {}).seq;
      if (seq !== undefined && (obj.metadata.annotations || {})[%q] !== seq) {
        kreact.patch(obj, {metadata: {annotations: {%q: seq}}});
      }
    }
    function onAdd(obj) { mirror(obj); }
    function onUpdate(oldObj, obj) { mirror(obj); }
`, namespace, s.fieldsLine(), s.workers, s.workers, annotation, annotation)
	ruleDir := filepath.Join(dir, "rules-"+namespace)
	if err := os.MkdirAll(ruleDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ruleDir, "mirror.yaml"), []byte(rule), 0o644); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	health := fmt.Sprintf("127.0.0.1:%d", ports[1])
	c := &controller{name: "kreact", metricsAddr: metrics, pprofAddr: metrics, ready: make(chan struct{}), stopped: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	// Warnings only: the bare controller writes no line per patch either.
	c.cmd = exec.Command(bin, "run", "-f", ruleDir, "--kubeconfig", s.kubeconfig,
		"--kube-api-qps", strconv.FormatFloat(s.qps, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(s.burst),
		"--metrics-bind-address", metrics, "--health-probe-bind-address", health,
		"--log-level", "warn", "--reload-interval", "0", "--pprof")
	if s.explain {
		c.explainAddr = fmt.Sprintf("127.0.0.1:%d", ports[2])
		c.cmd.Args = append(c.cmd.Args, "--explain-address", c.explainAddr)
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "  kreact serves /metrics and /debug/pprof/ at http://%s\n", metrics)
	go c.pollReady(health)
	return c, nil
}

// pollReady closes c.ready once kreact's /readyz at health answers 200,
// polling every 50ms until then or until the process stops.
func (c *controller) pollReady(health string) {
	for {
		select {
		case <-c.stopped:
			return
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get("http://" + health + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				close(c.ready)
				return
			}
		}
	}
}

// startBare runs this program as the bare controller on namespace.
func startBare(namespace string, s settings) (*controller, error) {
	self, err := bareBinary()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	c := &controller{name: "bare", pprofAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), ready: make(chan struct{}), stopped: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	c.cmd = exec.Command(self, "-bare", "-kubeconfig", s.kubeconfig, "-namespace", namespace, "-pprof", c.pprofAddr,
		"-workers", strconv.Itoa(s.workers), "-qps", strconv.FormatFloat(s.qps, 'f', -1, 64), "-burst", strconv.Itoa(s.burst))
	if err := c.startSaysSynced(); err != nil {
		return nil, err
	}
	return c, nil
}

// startSaysSynced starts one of this program's own baselines, which print
// "synced" once their caches are: c.ready closes then, and what they
// print is kept in c.stdout.
func (c *controller) startSaysSynced() error {
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.start(); err != nil {
		return err
	}
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			c.stdout.WriteString(line + "\n")
			if line == "synced" {
				once.Do(func() { close(c.ready) })
			}
		}
	}()
	return nil
}

func (c *controller) start() error {
	if c.cmd.Stdout == nil && c.name == "kreact" {
		c.cmd.Stdout = c.stdout
	}
	c.cmd.Stderr = c.stderr
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return c.cmd.Start()
}

// waitReady waits for the controller's initial state.
func (c *controller) waitReady(ctx context.Context, timeout time.Duration) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(timeout):
		return fmt.Errorf("%s not ready after %v; stderr:\n%s", c.name, timeout, c.stderr.String())
	}
}

// patches returns how many patches the controller sent. It is read before
// stop for kreact (from /metrics) and after stop for the bare controller
// (its last line).
func (c *controller) kreactPatches() (int64, error) {
	return scrapeMetric(c.metricsAddr, "kreact_actions_total", `verb="patch"`)
}

func (c *controller) barePatches() (int64, error) {
	for line := range strings.SplitSeq(c.stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "patches "); ok {
			return strconv.ParseInt(rest, 10, 64)
		}
	}
	return 0, fmt.Errorf("the bare controller did not report its patches; stderr:\n%s", c.stderr.String())
}

// stopCountingPatches stops the controller and returns how many patches
// it sent, read where each controller tells (see kreactPatches). It
// stops the controller whatever the error.
func (c *controller) stopCountingPatches() (int64, error) {
	if c.name == "kreact" {
		n, err := c.kreactPatches()
		c.stop()
		return n, err
	}
	c.stop()
	return c.barePatches()
}

// stop sends SIGTERM and waits for the process to exit.
func (c *controller) stop() {
	close(c.stopped)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// lockedBuffer is an io.Writer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// profile takes a CPU profile of the controller over d into dir, named
// for the phase and the controller; the channel reports when it is
// written. With no dir it does nothing.
func (c *controller) profile(dir, name string, d time.Duration) <-chan error {
	done := make(chan error, 1)
	if dir == "" {
		done <- nil
		return done
	}
	go func() {
		done <- func() error {
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", c.pprofAddr, int(d.Seconds())))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("profile: %s", resp.Status)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			f, err := os.CreateTemp(dir, name+"-*.pprof")
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}()
	}()
	return done
}
