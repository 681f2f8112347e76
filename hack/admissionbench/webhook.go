package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/hack/internal/benchstat"
)

// The names of the two webhooks' configurations, and the message each
// refuses with (kreact prefixes the rule's name).
const (
	ruleName     = "owner-required"
	kreactConfig = "admbench-kreact"
	bareConfig   = "admbench-bare"
	checkMessage = "a ConfigMap needs an owner label"
	kreactDenial = "rule " + ruleName + ": " + checkMessage
	bareDenial   = "bare: " + checkMessage
	// ownNamespace is kreact's --admission-namespace; nothing lives there
	// (with --admission-url, the webhooks intercept it like any other).
	ownNamespace = "admbench-system"
)

// bench holds what every phase uses.
type bench struct {
	client     kubernetes.Interface
	kubeconfig string
	kreact     string
	ruleDir    string
	workers    int
	// bareConfig is the configuration `kreact webhooks` prints for the
	// rule, named bareConfig; each bare phase sets its URL and caBundle.
	bareConfig *admregv1.ValidatingWebhookConfiguration
	probes     int
}

// writeRule writes kreact's rule into dir/rules and returns that folder.
func writeRule(dir string, workers int) (string, error) {
	rule := fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  events: [add]
  workers: %d
  admission: {failurePolicy: Fail, timeout: 5s}
  script: |
    function onValidate(req, ctx) {
      if (!req.object.metadata.labels?.owner) return %q;
    }
`, ruleName, namespace, workers, checkMessage)
	ruleDir := filepath.Join(dir, "rules")
	if err := os.MkdirAll(ruleDir, 0o755); err != nil {
		return "", err
	}
	return ruleDir, os.WriteFile(filepath.Join(ruleDir, "owner.yaml"), []byte(rule), 0o644)
}

// bareConfiguration returns the ValidatingWebhookConfiguration that
// `kreact webhooks` prints for the rule, named bareConfig: the bare
// webhook's scope is the rule's by construction.
func bareConfiguration(ctx context.Context, bin, ruleDir, kubeconfig string) (*admregv1.ValidatingWebhookConfiguration, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "webhooks", "-f", ruleDir, "--kubeconfig", kubeconfig,
		"--admission-name", bareConfig, "--admission-namespace", ownNamespace, "--admission-url", "https://127.0.0.1:1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kreact webhooks: %w: %s", err, stderr.String())
	}
	for doc := range strings.SplitSeq(stdout.String(), "\n---\n") {
		var v admregv1.ValidatingWebhookConfiguration
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			return nil, fmt.Errorf("kreact webhooks: %w", err)
		}
		if v.Kind == "ValidatingWebhookConfiguration" {
			if len(v.Webhooks) != 1 {
				return nil, fmt.Errorf("kreact webhooks: %d validating webhooks, want 1", len(v.Webhooks))
			}
			return &v, nil
		}
	}
	return nil, fmt.Errorf("kreact webhooks printed no ValidatingWebhookConfiguration:\n%s", stdout.String())
}

// deleteConfigurations deletes both webhooks' configurations (kreact
// applies a mutating one too, empty), so that the API server calls none.
func (b *bench) deleteConfigurations(ctx context.Context) error {
	v := b.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	m := b.client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	var opts metav1.DeleteOptions
	for _, err := range []error{v.Delete(ctx, kreactConfig, opts), m.Delete(ctx, kreactConfig, opts), v.Delete(ctx, bareConfig, opts)} {
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete webhook configuration: %w", err)
		}
	}
	return nil
}

// webhookProcess is a running webhook: kreact or the bare one.
type webhookProcess struct {
	cmd *exec.Cmd
	// metrics is kreact's /metrics address; empty for the bare webhook.
	metrics string
	stderr  *lockedBuffer
	exited  chan struct{}
}

func (p *webhookProcess) start() error {
	p.stderr = &lockedBuffer{}
	p.cmd.Stderr = p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.exited = make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return nil
}

// stop sends SIGTERM and waits for the process to exit.
func (p *webhookProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// startKreact runs `kreact run` with the rule, serving its webhook on
// loopback, and returns once it is ready.
func (b *bench) startKreact(ctx context.Context) (*webhookProcess, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	health := fmt.Sprintf("127.0.0.1:%d", ports[2])
	// Warnings only: the bare webhook logs nothing per review either.
	p := &webhookProcess{metrics: fmt.Sprintf("127.0.0.1:%d", ports[1]), cmd: exec.Command(b.kreact, "run", "-f", b.ruleDir, "--kubeconfig", b.kubeconfig,
		"--admission-bind-address", addr, "--admission-url", "https://"+addr,
		"--admission-name", kreactConfig, "--admission-namespace", ownNamespace,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]), "--health-probe-bind-address", health,
		"--log-level", "warn", "--reload-interval", "0")}
	if err := p.start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + health + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("kreact exited: %s", p.stderr.String())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("kreact not ready after 2m: %s", p.stderr.String())
		}
	}
}

// startBare runs this program as the bare webhook, then applies its
// configuration with the caBundle it prints.
func (b *bench) startBare(ctx context.Context) (*webhookProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p := &webhookProcess{cmd: exec.Command(self, "-bare", "-addr", addr)}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	caBundle, err := readServing(out)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("bare webhook: %w: %s", err, p.stderr.String())
	}
	cfg := b.bareConfig.DeepCopy()
	cfg.Webhooks[0].ClientConfig.URL = new("https://" + addr + "/validate")
	cfg.Webhooks[0].ClientConfig.CABundle = caBundle
	if _, err := b.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		p.stop()
		return nil, fmt.Errorf("create the bare webhook's configuration: %w", err)
	}
	return p, nil
}

// readServing reads the bare webhook's "ca BASE64" line, then its
// "serving" line, and returns the CA's PEM.
func readServing(out interface{ Read([]byte) (int, error) }) ([]byte, error) {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	var ca []byte
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "ca "); ok {
			var err error
			if ca, err = base64.StdEncoding.DecodeString(rest); err != nil {
				return nil, fmt.Errorf("ca: %w", err)
			}
		}
		if line == "serving" {
			if ca == nil {
				return nil, errors.New("serving before its CA")
			}
			// Nothing more is printed, and the pipe must not fill.
			go func() {
				for sc.Scan() {
				}
			}()
			return ca, nil
		}
	}
	return nil, errors.New("exited before serving")
}

// waitCalled waits until the API server calls the webhook that refuses
// with denial, and only it: a ConfigMap without the label is refused
// with that message, and one with it is allowed (a stale configuration
// of a stopped webhook would fail it, with failurePolicy Fail). With an
// empty denial, no webhook must refuse.
func (b *bench) waitCalled(ctx context.Context, denial string) error {
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		refused := b.probe(ctx, false)
		allowed := b.probe(ctx, true)
		switch {
		case denial == "" && refused == nil && allowed == nil:
			return nil
		case denial != "" && refused != nil && strings.Contains(refused.Error(), denial) && allowed == nil:
			return nil
		}
		last = errors.Join(refused, allowed)
		time.Sleep(100 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the API server does not call the webhook alone after 1m (want refusals %q): %v", denial, last)
}

// probe creates a ConfigMap with or without the label.
func (b *bench) probe(ctx context.Context, labelled bool) error {
	b.probes++
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", b.probes), Namespace: namespace}}
	if labelled {
		cm.Labels = map[string]string{"owner": "probe"}
	}
	_, err := b.client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// clear deletes the ConfigMaps of the namespace.
func (b *bench) clear(ctx context.Context) error {
	err := b.client.CoreV1().ConfigMaps(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("delete ConfigMaps: %w", err)
	}
	return nil
}

// measure runs one webhook through one phase.
func (b *bench) measure(ctx context.Context, webhook string, rate float64, repeat int, warmup, phase time.Duration) (result, error) {
	r := result{rate: rate, repeat: repeat, webhook: webhook}
	if err := b.deleteConfigurations(ctx); err != nil {
		return r, err
	}
	if err := b.clear(ctx); err != nil {
		return r, err
	}
	var p *webhookProcess
	var err error
	denial := ""
	switch webhook {
	case "kreact":
		p, err = b.startKreact(ctx)
		denial = kreactDenial
	case "bare":
		p, err = b.startBare(ctx)
		denial = bareDenial
	}
	if err != nil {
		return r, err
	}
	if p != nil {
		defer p.stop()
	}
	if err := b.waitCalled(ctx, denial); err != nil {
		return r, err
	}
	refuses := webhook != "none"
	prefix := fmt.Sprintf("r%d-%g-%s", repeat, rate, webhook)
	load(ctx, b.client, prefix+"-warmup", rate, warmup, refuses)
	cpu0, err := processCPU(p)
	if err != nil {
		return r, err
	}
	samples, elapsed := load(ctx, b.client, prefix, rate, phase, refuses)
	cpu1, err := processCPU(p)
	if err != nil {
		return r, err
	}
	r.fill(samples, elapsed)
	if p != nil && p.metrics != "" {
		logMetrics(p.metrics)
	}
	r.cpu = cpu1 - cpu0
	if p == nil {
		r.cpu = -1
	}
	for _, s := range samples {
		if s.err != nil && r.firstErr == nil {
			r.firstErr = s.err
		}
	}
	return r, ctx.Err()
}

// logMetrics prints what kreact counted of its reviews and keeps in its
// cache (the rule's watch), to tell what its CPU was spent on.
func logMetrics(addr string) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		fmt.Fprintf(os.Stderr, "  kreact metrics: %v\n", err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintf(os.Stderr, "  kreact metrics: %v\n", err)
		return
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "kreact_admission_requests_total{") || strings.HasPrefix(line, "kreact_informer_objects{") {
			fmt.Fprintf(os.Stderr, "  %s\n", line)
		}
	}
}

// processCPU is p's CPU seconds so far, or 0 without a process.
func processCPU(p *webhookProcess) (float64, error) {
	if p == nil {
		return 0, nil
	}
	return benchstat.CPUSeconds(p.cmd.Process.Pid)
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

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
