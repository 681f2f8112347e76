package mixin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// Namespace is where the rules of Live watch and Load makes changes.
const Namespace = "kreact-mixin"

// Rules are Live's rules, one file each: together they make every metric
// family of the mixin appear.
var Rules = map[string]string{
	// Acts on every ConfigMap: events, calls, actions, the queue.
	"labeller.yaml": rule("labeller", `  events: [add, update]
  permissions:
    - {resources: [configmaps], verbs: [patch]}
`, `function onAdd(obj) { kreact.patch(obj, {metadata: {labels: {seen: "yes"}}}); }
function onUpdate(old, obj) { if ((obj.metadata.labels || {}).seen !== "yes") kreact.patch(obj, {metadata: {labels: {seen: "yes"}}}); }`),
	// Throws on ConfigMaps labelled fail=yes, without retries: calls that
	// fail and are given up at once.
	"failer.yaml": rule("failer", `  events: [add]
  retries: 0
`, `function onAdd(obj) { if ((obj.metadata.labels || {}).fail === "yes") throw new Error("refused on purpose"); }`),
	// Holds deletions with its finalizer until onDelete ran.
	"holder.yaml": rule("holder", `  events: [add, delete]
  finalizer: true
`, `function onAdd(obj) {}
function onDelete(obj) {}`),
	// Answers admission requests: denies ConfigMaps labelled deny=yes.
	"guard.yaml": rule("guard", `  admission: {failurePolicy: Fail}
`, `function onValidate(req) { if (req.object && (req.object.metadata.labels || {}).deny === "yes") return "denied on purpose"; }`),
}

func rule(name, spec, script string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: %s\nspec:\n  watch:\n    - resource: configmaps\n      namespaces: [%s]\n%s  script: |\n", name, Namespace, spec)
	for line := range strings.SplitSeq(script, "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String()
}

// Build builds kreact from the repository's module (two folders up) into
// dir, and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "kreact")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kreact")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kreact: %w\n%s", err, out)
	}
	return bin, nil
}

// Live is a kreact run process with Rules against a control plane.
type Live struct {
	// MetricsURL is its /metrics.
	MetricsURL string
	// Log is its standard error.
	Log *testcluster.LogBuffer

	cmd  *exec.Cmd
	done chan struct{}
}

// Start writes Rules into dir and starts bin with them against the
// cluster of kubeconfig, with --shards and its admission webhooks served
// on loopback, and waits until it runs its rules. Stop ends it.
func Start(ctx context.Context, bin, kubeconfig, dir string) (*Live, error) {
	for name, content := range Rules {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	ports, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	metrics, admission := ports[0], ports[1]
	l := &Live{MetricsURL: "http://" + metrics + "/metrics", Log: &testcluster.LogBuffer{}, done: make(chan struct{})}
	l.cmd = exec.Command(bin, "run", "-f", dir, "--kubeconfig", kubeconfig,
		"--shards", "--shard-identity", "mixin", "--shard-namespace", "default",
		"--metrics-bind-address", metrics,
		"--admission-bind-address", admission, "--admission-url", "https://"+admission,
		"--admission-name", "kreact-mixin", "--admission-namespace", "kreact-mixin-system")
	l.cmd.Stderr = l.Log
	// kreact dies with the test (or the plot), even when that is killed.
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := l.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kreact: %w", err)
	}
	var waitErr error
	go func() { waitErr = l.cmd.Wait(); close(l.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(l.Log.String(), "kreact is running") {
		select {
		case <-l.done:
			return nil, fmt.Errorf("kreact exited (%v):\n%s", waitErr, l.Log)
		case <-ctx.Done():
			l.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			l.Stop()
			return nil, fmt.Errorf("kreact not running after 2 minutes:\n%s", l.Log)
		}
	}
	return l, nil
}

// Stop kills the process and waits for it.
func (l *Live) Stop() {
	_ = l.cmd.Process.Kill()
	<-l.done
}

// Scrape returns the text of /metrics.
func (l *Live) Scrape(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.MetricsURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scrape: %s: %w", resp.Status, err)
	}
	return string(body), nil
}

// Load makes n ConfigMaps in Namespace, every fifth one labelled for
// failer to throw, tries every seventh labelled for guard to deny, and
// deletes the first half again, so that every rule has work.
func Load(ctx context.Context, cs kubernetes.Interface, prefix string, n int) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}
	cms := cs.CoreV1().ConfigMaps(Namespace)
	for i := range n {
		labels := map[string]string{}
		if i%5 == 0 {
			labels["fail"] = "yes"
		}
		if i%7 == 3 {
			labels["deny"] = "yes"
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: labels}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil && labels["deny"] == "" {
			return fmt.Errorf("create configmap: %w", err)
		}
	}
	for i := range n / 2 {
		if err := cms.Delete(ctx, fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete configmap: %w", err)
		}
	}
	return nil
}

func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, ln.Addr().String())
		_ = ln.Close()
	}
	return addrs, nil
}
