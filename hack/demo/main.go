package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/demo"
	"github.com/kreact/kreact/internal/testcluster"
)

const (
	bold  = "\033[1m"
	dim   = "\033[2m"
	green = "\033[32m"
	cyan  = "\033[36m"
	red   = "\033[31m"
	reset = "\033[0m"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%sdemo failed:%s %v\n", red, reset, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	bin := filepath.Join(root, "bin")
	dir := filepath.Join(root, ".kreact-dev", "demo")
	_ = os.RemoveAll(dir)

	heading("1. Start a local control plane (etcd, kube-apiserver, kube-controller-manager)")
	start := time.Now()
	cluster, err := testcluster.Start(testcluster.Options{Dir: dir, BinDir: bin, ControllerManager: true})
	if err != nil {
		return err
	}
	defer func() {
		heading("Clean up")
		_ = cluster.Stop()
		fmt.Println("control plane stopped; logs and kubeconfig kept in", rel(root, dir))
	}()
	kubeconfig := cluster.KubeconfigPath()
	fmt.Printf("ready in %s; kubeconfig %s\n", time.Since(start).Round(100*time.Millisecond), rel(root, kubeconfig))

	heading("2. Start a webhook receiver for the notify-failures rule on " + demo.WebhookAddr)
	webhook, err := demo.StartReceiver(ctx, demo.WebhookAddr, func(text string) {
		fmt.Printf("  %s📨 webhook received:%s %s\n", cyan, reset, text)
	})
	if err != nil {
		return fmt.Errorf("webhook receiver: %w", err)
	}

	heading("3. kreact run -f examples/")
	logPath := filepath.Join(dir, "kreact.log")
	kreact, err := startKreact(ctx, filepath.Join(bin, "kreact"), logPath, "run", "-f", "examples/", "--kubeconfig", kubeconfig)
	if err != nil {
		return err
	}
	defer kreact.stop()
	if err := kreact.waitFor(ctx, "caches synced"); err != nil {
		return err
	}

	heading("4. Install the Backup CRD (kreact's backup rule is waiting for it)")
	if err := kubectl(bin, kubeconfig, "apply", "-f", "examples/crds/backup.yaml"); err != nil {
		return err
	}

	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		return err
	}
	env := &demo.Env{Client: client, Webhook: webhook, Say: func(format string, args ...any) {
		fmt.Printf("  %s$%s %s\n", dim, reset, fmt.Sprintf(format, args...))
	}}
	var failed []string
	for i, step := range demo.Steps() {
		heading(fmt.Sprintf("%d. Rule %s: %s", i+5, step.Rule, step.Description))
		got, err := step.Run(ctx, env)
		if err != nil {
			fmt.Printf("  %s✗ %v%s\n", red, err, reset)
			failed = append(failed, step.Rule)
			continue
		}
		fmt.Printf("  %s✓ %s%s\n", green, got, reset)
	}

	heading("What the cluster looks like now")
	_ = kubectl(bin, kubeconfig, "get", "ns", "team-a", "--show-labels")
	_ = kubectl(bin, kubeconfig, "get", "networkpolicies,backups,configmaps", "-n", "team-a")
	_ = kubectl(bin, kubeconfig, "get", "events", "-n", "team-a", "--field-selector", "source=kreact")

	heading("kreact's actions (from " + rel(root, logPath) + ")")
	kreact.printActions()
	if len(failed) > 0 {
		return fmt.Errorf("rules without the expected reaction: %s", strings.Join(failed, ", "))
	}
	fmt.Printf("\n%sAll %d example rules reacted.%s Try it yourself: go run ./hack/cluster up, then bin/kreact run -f examples/ --kubeconfig .kreact-dev/kubeconfig\n", bold, len(demo.Steps()), reset)
	return nil
}

func heading(s string) { fmt.Printf("\n%s== %s%s\n", bold, s, reset) }

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func kubectl(bin, kubeconfig string, args ...string) error {
	fmt.Printf("  %s$ kubectl %s%s\n", dim, strings.Join(args, " "), reset)
	cmd := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = indent(os.Stdout), indent(os.Stderr)
	return cmd.Run()
}

// indent prefixes every line written to w.
func indent(w io.Writer) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		s := bufio.NewScanner(pr)
		for s.Scan() {
			fmt.Fprintf(w, "    %s\n", s.Text())
		}
	}()
	return pw
}

// process is kreact running in the background, its log teed to a file.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	done chan struct{}
}

func startKreact(ctx context.Context, path, logPath string, args ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fmt.Printf("  %s$ kreact %s%s\n", dim, strings.Join(args, " "), reset)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		s := bufio.NewScanner(stderr)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			line := s.Text()
			fmt.Fprintln(f, line)
			p.mu.Lock()
			p.log = append(p.log, line)
			p.mu.Unlock()
			if interesting(line) {
				fmt.Printf("  %skreact │%s %s\n", cyan, reset, shorten(line))
			}
		}
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// actionVerb returns the verb of a log line that reports an action done
// ("patch done"), or "".
func actionVerb(l logLine) string {
	switch verb, ok := strings.CutSuffix(l.get("msg"), " done"); {
	case !ok:
		return ""
	case verb == "create", verb == "apply", verb == "patch", verb == "delete", verb == "event", verb == "http":
		return verb
	}
	return ""
}

// interesting picks the log lines worth showing live: rules starting or
// waiting, actions done, script logs, warnings and errors.
func interesting(line string) bool {
	l, ok := parseLogLine(line)
	if !ok {
		return false
	}
	level, msg := l.get("level"), l.get("msg")
	switch {
	case l.get("source") == "client-go", l.get("component") != "":
		return level == "ERROR"
	case actionVerb(l) != "",
		msg == "rule started",
		strings.HasPrefix(msg, "rule waits"),
		strings.Contains(msg, "caches synced"),
		level == "WARN",
		level == "ERROR",
		// A script's kreact.log: the only other lines with an origin.
		l.get("origin") != "":
		return true
	}
	return false
}

// shorten drops the timestamp and noisy attributes from a log line, and
// keeps the others as written.
func shorten(line string) string {
	l, ok := parseLogLine(line)
	if !ok {
		return line
	}
	return l.without(func(f field) bool {
		return f.key == "time" || f.key == "origin" || (f.key == "queue" && strings.HasPrefix(f.value, "kreact_rule_"))
	})
}

func (p *process) waitFor(ctx context.Context, text string) error {
	deadline := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		for _, l := range p.log {
			if strings.Contains(l, text) {
				p.mu.Unlock()
				return nil
			}
		}
		p.mu.Unlock()
		select {
		case <-p.done:
			return errors.New("kreact exited early; see its log")
		case <-deadline:
			return fmt.Errorf("kreact did not log %q within 2 minutes", text)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// printActions counts the actions kreact executed, per rule and verb.
func (p *process) printActions() {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts := map[string]int{}
	var order []string
	for _, line := range p.log {
		l, _ := parseLogLine(line)
		verb, rule := actionVerb(l), l.get("rule")
		if verb == "" || rule == "" {
			continue
		}
		key := fmt.Sprintf("%-26s %s", rule, verb)
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	}
	for _, k := range order {
		fmt.Printf("  %s × %d\n", k, counts[k])
	}
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
