package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/hack/internal/benchstat"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/ruleobjects"
)

// ruleBench is the rule-objects phase's setting: n rules spread over
// namespaces, the same rules as files and as objects.
type ruleBench struct {
	n, namespaces int
	// window is how long a process is left idle before its memory is
	// read: after ready (files, and objects with none), and after every
	// status says Ready (objects), where it is also the idle window
	// whose status writes are counted.
	window  time.Duration
	timeout time.Duration
	kreact  string
	// kubeconfig is the control plane's; client is an admin client with
	// a high QPS; apiserver reads the API server's /metrics.
	kubeconfig string
	client     dynamic.Interface
	apiserver  *apiserverMetrics
	// dir holds the rule files: one file per namespace, and one file of
	// one rule (the files' baseline).
	dir, one string
	// createAlone is how long creating the n objects took with no
	// kreact running, once before the repeats: the API server's own pace.
	createAlone time.Duration
	// profile, when set, is a directory for a CPU profile of kreact with
	// the n rules over its idle window, and a heap profile at its end.
	profile string
}

// ruleNamespace and the names of rule i: the namespace it watches, its
// name as a file's rule, and its name as a Rule object in that namespace
// (which runs as NAMESPACE.NAME).
func ruleNamespace(i, namespaces int) string { return fmt.Sprintf("bench-rules-%03d", i%namespaces) }
func fileRuleName(i, namespaces int) string {
	return fmt.Sprintf("%s-rule-%04d", ruleNamespace(i, namespaces), i)
}
func objectRuleName(i int) string { return fmt.Sprintf("rule-%04d", i) }

// ruleSpec is rule i's spec, the same for its file and its object: it
// watches the ConfigMaps of its namespace, of which there are none, so the
// rule stays idle; each script is distinct, so that each is compiled.
func ruleSpec(i, namespaces int) map[string]any {
	ns := ruleNamespace(i, namespaces)
	return map[string]any{
		"watch":       []any{map[string]any{"resource": "configmaps", "namespaces": []any{ns}}},
		"permissions": []any{map[string]any{"resources": []any{"configmaps"}, "verbs": []any{"patch"}, "namespaces": []any{ns}}},
		"script": fmt.Sprintf(`function onAdd(obj) {
  if ((obj.data || {}).rule === %q) {
    kreact.patch(obj, {metadata: {labels: {"bench-rule": %q}}});
  }
}
`, strconv.Itoa(i), strconv.Itoa(i)),
	}
}

// ruleObject is rule i as a Rule object.
func ruleObject(i, namespaces int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kreact.dev/v1alpha1", "kind": "Rule",
		"metadata": map[string]any{"name": objectRuleName(i), "namespace": ruleNamespace(i, namespaces)},
		"spec":     ruleSpec(i, namespaces),
	}}
}

// fileRule is rule i as a document of a rule file.
func fileRule(i, namespaces int) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"apiVersion": "kreact.dev/v1alpha1", "kind": "Rule",
		"metadata": map[string]any{"name": fileRuleName(i, namespaces)},
		"spec":     ruleSpec(i, namespaces),
	})
}

// grantRules grants the default ServiceAccount of ns, which a Rule of ns
// acts as (docs/multitenancy.md), what the rules do: read and patch its
// ConfigMaps.
func grantRules(ctx context.Context, client dynamic.Interface, ns string) error {
	rbac := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
	}
	role := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "rules", "namespace": ns},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch", "patch"}}}}}
	binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "rules", "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rules"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": ns}}}}
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		obj *unstructured.Unstructured
	}{{rbac("roles"), role}, {rbac("rolebindings"), binding}} {
		if _, err := client.Resource(o.gvr).Namespace(ns).Create(ctx, o.obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("grant the rules of %s: %w", ns, err)
		}
	}
	return nil
}

// setupRules creates the namespaces, installs the CRDs of crdDir and
// writes the rule files under dir.
func setupRules(ctx context.Context, b *ruleBench, crdDir, dir string) error {
	for ns := range b.namespaces {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ruleNamespace(ns, b.namespaces)}}}
		if _, err := b.client.Resource(namespaces).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace: %w", err)
		}
		if err := grantRules(ctx, b.client, ruleNamespace(ns, b.namespaces)); err != nil {
			return err
		}
	}
	if err := installCRDs(ctx, b.client, crdDir); err != nil {
		return err
	}
	// The CRD is established, but its resource may not be served yet.
	probe := ruleObject(0, b.namespaces)
	err := poll(ctx, time.Minute, func() bool {
		_, err := b.client.Resource(ruleobjects.RulesGVR).Namespace(probe.GetNamespace()).Create(ctx, probe, metav1.CreateOptions{})
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("create a Rule object: %w", err)
	}
	if err := deleteRuleObjects(ctx, b); err != nil {
		return err
	}
	start := time.Now()
	if err := createRuleObjects(ctx, b); err != nil {
		return err
	}
	b.createAlone = time.Since(start)
	if err := deleteRuleObjects(ctx, b); err != nil {
		return err
	}
	b.dir, b.one = filepath.Join(dir, "rules"), filepath.Join(dir, "one")
	for _, d := range []string{b.dir, b.one} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := make([][]byte, b.namespaces)
	for i := range b.n {
		doc, err := fileRule(i, b.namespaces)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := os.WriteFile(filepath.Join(b.one, "rule.yaml"), doc, 0o644); err != nil {
				return err
			}
		}
		ns := i % b.namespaces
		if len(files[ns]) > 0 {
			files[ns] = append(files[ns], "---\n"...)
		}
		files[ns] = append(files[ns], doc...)
	}
	for ns, data := range files {
		if len(data) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(b.dir, ruleNamespace(ns, b.namespaces)+".yaml"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// installCRDs creates the CRDs of the YAML files in dir and waits until
// each is established.
func installCRDs(ctx context.Context, client dynamic.Interface, dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("CRDs in %s: none found (run from the repository's root, or set -rule-crds)", dir)
	}
	crds := client.Resource(testcluster.CRDGVR)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if _, err := crds.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
		}
		err = poll(ctx, time.Minute, func() bool {
			got, err := crds.Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", u.GetName(), err)
		}
	}
	return nil
}

// poll calls cond every 50ms until it is true, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// apiserverMetrics reads the API server's own /metrics.
type apiserverMetrics struct {
	client *http.Client
	host   string
}

func newAPIServerMetrics(cfg *rest.Config) (*apiserverMetrics, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiserverMetrics{client: c, host: strings.TrimSuffix(cfg.Host, "/")}, nil
}

// page returns the API server's /metrics, in Prometheus text format.
func (m *apiserverMetrics) page(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.host+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("API server metrics: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("API server metrics: %s", resp.Status)
	}
	return string(data), nil
}

// statusWrites returns the API server's count of requests that patched
// the status of Rule objects, whatever their answer.
func (m *apiserverMetrics) statusWrites(ctx context.Context) (int64, error) {
	text, err := m.page(ctx)
	if err != nil {
		return 0, err
	}
	return sumMetric(text, "apiserver_request_total",
		`group="kreact.dev"`, `resource="rules"`, `subresource="status"`, `verb="PATCH"`)
}

// sumMetric adds the values of the samples of family whose labels
// contain every one of matches, in Prometheus text format.
func sumMetric(text, family string, matches ...string) (int64, error) {
	var sum float64
lines:
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(line, family+"{") {
			continue
		}
		for _, m := range matches {
			if !strings.Contains(line, m) {
				continue lines
			}
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", line, err)
		}
		sum += v
	}
	return int64(sum), nil
}

// kreactProcess is one kreact run of the rule-objects phase, its output
// read line by line.
type kreactProcess struct {
	cmd             *exec.Cmd
	metrics, health string
	output          *lockedBuffer
	// objectsLoaded is closed at the first "rule objects loaded" line
	// that says every one of want objects runs; loadedAt is when it came.
	want          int
	objectsLoaded chan struct{}
	loadedAt      time.Time
	exited        chan struct{}
}

// objectsLoadedLine matches kreact's line after each load of the rule
// objects (ruleobjects.Run).
var objectsLoadedLine = regexp.MustCompile(`msg="rule objects loaded" objects=(\d+) running=(\d+)`)

// startRuleKreact runs `kreact run` with args, at log level info (the
// objects' loads are logged there; the files' rules log one line each
// too, so both runs write about as much).
func startRuleKreact(b *ruleBench, wantObjects int, args ...string) (*kreactProcess, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	p := &kreactProcess{metrics: fmt.Sprintf("127.0.0.1:%d", ports[0]), health: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		output: &lockedBuffer{}, want: wantObjects, objectsLoaded: make(chan struct{}), exited: make(chan struct{})}
	args = append([]string{"run", "--kubeconfig", b.kubeconfig, "--metrics-bind-address", p.metrics,
		"--health-probe-bind-address", p.health, "--log-level", "info", "--reload-interval", "0"}, args...)
	if b.profile != "" {
		args = append(args, "--pprof")
	}
	p.cmd = exec.Command(b.kreact, args...)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close()
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			p.output.WriteString(line + "\n")
			if m := objectsLoadedLine.FindStringSubmatch(line); m != nil && m[1] == strconv.Itoa(p.want) && m[2] == m[1] {
				once.Do(func() { p.loadedAt = time.Now(); close(p.objectsLoaded) })
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// pid is the process's id.
func (p *kreactProcess) pid() int { return p.cmd.Process.Pid }

// readyz reports whether /readyz answers 200, and its body.
func (p *kreactProcess) readyz() (bool, string) {
	resp, err := http.Get("http://" + p.health + "/readyz")
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode == http.StatusOK, strings.TrimSpace(string(body))
}

// metric returns the sum of family's samples that match, in kreact's
// /metrics.
func (p *kreactProcess) metric(family, match string) (int64, error) {
	return scrapeMetric(p.metrics, family, match)
}

// scrapeMetric sums family's samples that match every one of matches in
// the /metrics served at addr (a kreact's, or the bare controller's).
func scrapeMetric(addr, family string, matches ...string) (int64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return sumMetric(string(data), family, matches...)
}

// gauge returns the value of a metric without labels in kreact's /metrics.
func (p *kreactProcess) gauge(name string) (int64, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(v), err
		}
	}
	return 0, fmt.Errorf("no %s in kreact's metrics", name)
}

// waitReady waits until /readyz answers 200 and kreact_rules_loaded is
// n, polling /readyz every 50ms and reading the metrics (a large page
// with many rules) at most once a second. It returns when it was seen.
func (p *kreactProcess) waitReady(ctx context.Context, n int, timeout time.Duration) (time.Time, error) {
	var lastScrape time.Time
	var last string
	err := poll(ctx, timeout, func() bool {
		select {
		case <-p.exited:
			return true
		default:
		}
		ok, body := p.readyz()
		last = body
		if !ok || time.Since(lastScrape) < time.Second {
			return false
		}
		lastScrape = time.Now()
		loaded, err := p.gauge("kreact_rules_loaded")
		return err == nil && loaded == int64(n)
	})
	select {
	case <-p.exited:
		return time.Time{}, fmt.Errorf("kreact exited; output:\n%s", p.tail())
	default:
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("kreact not ready with %d rules loaded: %w (/readyz: %s)", n, err, last)
	}
	return time.Now(), nil
}

// tail is the end of the process's output, for errors.
func (p *kreactProcess) tail() string {
	s := p.output.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// stop sends SIGTERM and waits for the process to exit.
func (p *kreactProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// filesRun is one kreact run -f: the n rules' files, or the one rule's.
type filesRun struct {
	rules int
	// ready is from the process's start to /readyz with the rules loaded.
	ready time.Duration
	// cpuReady is the CPU seconds to ready; cpuIdle over the window after.
	cpuReady, cpuIdle float64
	// hwm and rss are VmHWM and VmRSS at the end of the window.
	hwm, rss int64
}

// runFiles runs kreact on the rule files of dir, which hold rules rules.
func runFiles(ctx context.Context, b *ruleBench, dir string, rules int) (filesRun, error) {
	r := filesRun{rules: rules}
	start := time.Now()
	p, err := startRuleKreact(b, -1, "-f", dir)
	if err != nil {
		return r, err
	}
	defer p.stop()
	ready, err := p.waitReady(ctx, rules, b.timeout)
	if err != nil {
		return r, err
	}
	r.ready = ready.Sub(start)
	if r.cpuReady, err = benchstat.CPUSeconds(p.pid()); err != nil {
		return r, err
	}
	if err := p.idle(ctx, b, fmt.Sprintf("files-%d", rules)); err != nil {
		return r, err
	}
	cpu, err := benchstat.CPUSeconds(p.pid())
	if err != nil {
		return r, err
	}
	r.cpuIdle = cpu - r.cpuReady
	r.hwm, r.rss, err = benchstat.Memory(p.pid())
	return r, err
}

// idle waits for the window; with b.profile, and more than one rule, it
// takes a CPU profile of kreact over the window and a heap profile at its
// end (after a collection, so that it shows what is live: a process that
// has allocated little since its load may not have collected since), and
// the same in text with the runtime's memory statistics, and the
// goroutines, named for what runs and when.
func (p *kreactProcess) idle(ctx context.Context, b *ruleBench, name string) error {
	if b.profile == "" || name == "files-1" {
		return sleep(ctx, b.window)
	}
	if err := os.MkdirAll(b.profile, 0o755); err != nil {
		return err
	}
	stamp := time.Now().Format("150405")
	cpu := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(b.window.Seconds()))
	if err := p.saveProfile(ctx, cpu, filepath.Join(b.profile, name+"-cpu-"+stamp+".pprof")); err != nil {
		return err
	}
	if err := p.saveProfile(ctx, "/debug/pprof/heap?gc=1", filepath.Join(b.profile, name+"-heap-"+stamp+".pprof")); err != nil {
		return err
	}
	// The same in text, which ends with runtime.MemStats: how much of
	// the heap is live, and how much the runtime holds besides.
	if err := p.saveProfile(ctx, "/debug/pprof/heap?debug=1", filepath.Join(b.profile, name+"-heap-"+stamp+".txt")); err != nil {
		return err
	}
	// Goroutines, counted by where they wait: their stacks are memory
	// per rule too.
	return p.saveProfile(ctx, "/debug/pprof/goroutine?debug=1", filepath.Join(b.profile, name+"-goroutines-"+stamp+".txt"))
}

// saveProfile writes what kreact's path under /debug/pprof/ answers to
// file.
func (p *kreactProcess) saveProfile(ctx context.Context, path, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metrics+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", path, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	return os.WriteFile(file, data, 0o644)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// objectsRun is one kreact run --rule-objects: started with none, then
// given the n rule objects.
type objectsRun struct {
	// empty is from the process's start to its watches of the two kinds
	// synced; cpuEmpty its CPU seconds to the end of the window after;
	// hwmEmpty and rssEmpty its VmHWM and VmRSS then.
	empty              time.Duration
	cpuEmpty           float64
	hwmEmpty, rssEmpty int64
	// Each from the first create: create is until the last create
	// returned; loaded until kreact logged every object's rule running;
	// readyz until /readyz answered 200 with kreact_rules_loaded at n
	// (0: not by the time every status said Ready, see readyzBody);
	// allReady until every object's status said Ready True for its
	// generation.
	create, loaded, readyz, allReady time.Duration
	readyzBody                       string
	rulesLoaded                      int64
	// cpuLoad is the CPU seconds from the first create to allReady;
	// cpuIdle over the window after.
	cpuLoad, cpuIdle float64
	// hwm and rss are VmHWM and VmRSS at the end of the window after
	// allReady.
	hwm, rss int64
	// writesLoad are the status writes from the first create to
	// allReady, writesIdle those over the window after.
	writesLoad, writesIdle int64
}

// runObjects runs kreact --rule-objects with no rule, then creates the n
// rule objects, waits for every status to say Ready, then for the window,
// and deletes the objects again.
func runObjects(ctx context.Context, b *ruleBench) (r objectsRun, err error) {
	tracker, stopTracking, err := trackReady(ctx, b.client)
	if err != nil {
		return r, err
	}
	defer stopTracking()
	start := time.Now()
	p, err := startRuleKreact(b, b.n, "--rule-objects")
	if err != nil {
		return r, err
	}
	defer func() {
		p.stop()
		if derr := deleteRuleObjects(ctx, b); derr != nil && err == nil {
			err = derr
		}
	}()
	// With no rule, /readyz says "no rules loaded": the process is ready
	// when its watches of the two kinds have synced.
	err = poll(ctx, b.timeout, func() bool {
		n, err := p.metric("kreact_informer_synced", `.kreact.dev"}`)
		return err == nil && n == 2
	})
	if err != nil {
		return r, fmt.Errorf("kreact --rule-objects: watches of the rule objects not synced: %w; output:\n%s", err, p.tail())
	}
	r.empty = time.Since(start)
	if err := sleep(ctx, b.window); err != nil {
		return r, err
	}
	pid := p.pid()
	if r.cpuEmpty, err = benchstat.CPUSeconds(pid); err != nil {
		return r, err
	}
	if r.hwmEmpty, r.rssEmpty, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	writes0, err := b.apiserver.statusWrites(ctx)
	if err != nil {
		return r, err
	}

	first := time.Now()
	if err := createRuleObjects(ctx, b); err != nil {
		return r, err
	}
	r.create = time.Since(first)

	// /readyz is polled until every status says Ready; the metrics, a
	// large page with a thousand rules, only when /readyz says ready.
	var lastScrape time.Time
	err = poll(ctx, b.timeout, func() bool {
		if r.readyz == 0 {
			ok, body := p.readyz()
			r.readyzBody = body
			if ok && time.Since(lastScrape) >= time.Second {
				lastScrape = time.Now()
				if n, err := p.gauge("kreact_rules_loaded"); err == nil && n == int64(b.n) {
					r.readyz = time.Since(first)
				}
			}
		}
		return tracker.ready() == b.n
	})
	if err != nil {
		return r, fmt.Errorf("rule objects Ready: %d of %d: %w", tracker.ready(), b.n, err)
	}
	r.allReady = tracker.allReadyAt().Sub(first)
	if r.cpuLoad, err = benchstat.CPUSeconds(pid); err != nil {
		return r, err
	}
	r.cpuLoad -= r.cpuEmpty
	writes1, err := b.apiserver.statusWrites(ctx)
	if err != nil {
		return r, err
	}
	r.writesLoad = writes1 - writes0
	select {
	case <-p.objectsLoaded:
		r.loaded = p.loadedAt.Sub(first)
	default:
		return r, fmt.Errorf("every status says Ready, but kreact did not log all %d rule objects running; output:\n%s", b.n, p.tail())
	}

	if err := p.idle(ctx, b, fmt.Sprintf("objects-%d", b.n)); err != nil {
		return r, err
	}
	cpu, err := benchstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	r.cpuIdle = cpu - r.cpuEmpty - r.cpuLoad
	if r.hwm, r.rss, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	writes2, err := b.apiserver.statusWrites(ctx)
	if err != nil {
		return r, err
	}
	r.writesIdle = writes2 - writes1
	if r.rulesLoaded, err = p.gauge("kreact_rules_loaded"); err != nil {
		return r, err
	}
	if r.readyz == 0 {
		_, r.readyzBody = p.readyz()
	}
	return r, nil
}

// createRuleObjects creates the n Rule objects, from 32 clients at once.
func createRuleObjects(ctx context.Context, b *ruleBench) error {
	var created atomic.Int64
	err := parallel(32, b.n, func(i int) error {
		_, err := b.client.Resource(ruleobjects.RulesGVR).Namespace(ruleNamespace(i, b.namespaces)).
			Create(ctx, ruleObject(i, b.namespaces), metav1.CreateOptions{})
		if err == nil {
			created.Add(1)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create rule objects (%d created): %w", created.Load(), err)
	}
	return nil
}

// readyTracker counts the Rule objects whose status says Ready True for
// their generation, from a watch of all of them.
type readyTracker struct {
	mu      sync.Mutex
	isReady map[string]bool
	n       int
	at      time.Time // when n last grew
}

func (t *readyTracker) set(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := u.GetNamespace() + "/" + u.GetName()
	now := !deleted && statusReady(u)
	t.mu.Lock()
	defer t.mu.Unlock()
	if now == t.isReady[key] {
		return
	}
	if now {
		t.isReady[key] = true
		t.n++
		t.at = time.Now()
	} else {
		delete(t.isReady, key)
		t.n--
	}
}

// ready is how many objects are Ready now.
func (t *readyTracker) ready() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// allReadyAt is when the count last grew.
func (t *readyTracker) allReadyAt() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at
}

// statusReady reports whether a rule object's status says Ready True for
// its current generation.
func statusReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Ready" {
			continue
		}
		gen, _ := m["observedGeneration"].(int64)
		return m["status"] == "True" && gen == u.GetGeneration()
	}
	return false
}

// trackReady watches every Rule object and counts those Ready, until
// stop is called.
func trackReady(ctx context.Context, client dynamic.Interface) (*readyTracker, func(), error) {
	t := &readyTracker{isReady: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	factory := cgdynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	inf := factory.ForResource(ruleobjects.RulesGVR).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.set(obj, false) },
		UpdateFunc: func(_, obj any) { t.set(obj, false) },
		DeleteFunc: func(obj any) { t.set(obj, true) },
	}); err != nil {
		cancel()
		return nil, nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, nil, errors.New("watch of the rule objects not synced")
	}
	return t, func() { cancel(); factory.Shutdown() }, nil
}

// deleteRuleObjects deletes every Rule object of the benchmark's
// namespaces and waits until they are gone.
func deleteRuleObjects(ctx context.Context, b *ruleBench) error {
	err := parallel(16, b.namespaces, func(ns int) error {
		return b.client.Resource(ruleobjects.RulesGVR).Namespace(ruleNamespace(ns, b.namespaces)).
			DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	if err != nil {
		return fmt.Errorf("delete rule objects: %w", err)
	}
	return poll(ctx, b.timeout, func() bool {
		l, err := b.client.Resource(ruleobjects.RulesGVR).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0
	})
}

// ruleRepeat is one repeat of the rule-objects phase: the files with the
// n rules, the files' baseline with one rule, and the objects.
type ruleRepeat struct {
	repeat    int
	files     filesRun
	one       filesRun
	objects   objectsRun
	n         int
	firstWent string
}

// measureRules runs one repeat: the three processes one after the other,
// the objects first in odd repeats.
func measureRules(ctx context.Context, b *ruleBench, repeat int) (ruleRepeat, error) {
	rr := ruleRepeat{repeat: repeat, n: b.n, firstWent: "files"}
	steps := []func() error{
		func() (err error) {
			fmt.Fprintf(os.Stderr, "rule objects, repeat %d: one rule file\n", repeat+1)
			rr.one, err = runFiles(ctx, b, b.one, 1)
			return err
		},
		func() (err error) {
			fmt.Fprintf(os.Stderr, "rule objects, repeat %d: %d rules in files\n", repeat+1, b.n)
			rr.files, err = runFiles(ctx, b, b.dir, b.n)
			return err
		},
		func() (err error) {
			fmt.Fprintf(os.Stderr, "rule objects, repeat %d: %d rule objects\n", repeat+1, b.n)
			rr.objects, err = runObjects(ctx, b)
			return err
		},
	}
	if repeat%2 == 1 {
		rr.firstWent = "objects"
		steps = []func() error{steps[2], steps[0], steps[1]}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return rr, err
		}
	}
	return rr, nil
}

// perRule is the memory of each idle rule: files (n rules against one),
// objects (n against none, in the same process).
func (rr ruleRepeat) perRule(rss bool) (files, objects float64) {
	if rss {
		return float64(rr.files.rss-rr.one.rss) / float64(rr.n-1), float64(rr.objects.rss-rr.objects.rssEmpty) / float64(rr.n)
	}
	return float64(rr.files.hwm-rr.one.hwm) / float64(rr.n-1), float64(rr.objects.hwm-rr.objects.hwmEmpty) / float64(rr.n)
}

// ruleReport writes every run, then the medians (min–max) of the
// figures and of the objects/files ratios taken per repeat.
func ruleReport(w io.Writer, b *ruleBench, rs []ruleRepeat) {
	fmt.Fprintln(w, "| repeat | run | to ready | CPU s to ready | CPU s idle window | peak RSS | RSS after window |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, rr := range rs {
		for _, f := range []filesRun{rr.one, rr.files} {
			fmt.Fprintf(w, "| %d | files, %s | %s | %.2f | %.2f | %s | %s |\n", rr.repeat+1, rulesOf(f.rules),
				f.ready.Round(10*time.Millisecond), f.cpuReady, f.cpuIdle, mib(f.hwm), mib(f.rss))
		}
		o := rr.objects
		fmt.Fprintf(w, "| %d | objects, none | %s | %.2f (to the window's end) | | %s | %s |\n", rr.repeat+1,
			o.empty.Round(10*time.Millisecond), o.cpuEmpty, mib(o.hwmEmpty), mib(o.rssEmpty))
		fmt.Fprintf(w, "| %d | objects, %d | %s to every status Ready | %.2f | %.2f | %s | %s |\n", rr.repeat+1, rr.n,
			o.allReady.Round(10*time.Millisecond), o.cpuLoad, o.cpuIdle, mib(o.hwm), mib(o.rss))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| repeat | first | objects: created | all running (kreact's log) | /readyz with kreact_rules_loaded | every status Ready | status writes to Ready | in the idle window |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, rr := range rs {
		o := rr.objects
		readyz := o.readyz.Round(10 * time.Millisecond).String()
		if o.readyz == 0 {
			readyz = fmt.Sprintf("not ready (%q; kreact_rules_loaded %d)", o.readyzBody, o.rulesLoaded)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %d | %d |\n", rr.repeat+1, rr.firstWent,
			o.create.Round(10*time.Millisecond), o.loaded.Round(10*time.Millisecond), readyz,
			o.allReady.Round(10*time.Millisecond), o.writesLoad, o.writesIdle)
	}

	type row struct {
		name           string
		files, objects func(rr ruleRepeat) float64
		unit           func(float64) string
	}
	secs := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
	kib := func(v float64) string { return fmt.Sprintf("%.1f KiB", v/1024) }
	cpu := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	perMinute := func(n int64, d time.Duration) float64 { return float64(n) / d.Minutes() }
	rows := []row{
		{"to all running (files: start to /readyz; objects: first create to kreact's log of all running)",
			func(rr ruleRepeat) float64 { return rr.files.ready.Seconds() },
			func(rr ruleRepeat) float64 { return rr.objects.loaded.Seconds() }, secs},
		{fmt.Sprintf("objects: creating them (with no kreact running, once: %.2f s)", b.createAlone.Seconds()), nil,
			func(rr ruleRepeat) float64 { return rr.objects.create.Seconds() }, secs},
		{"objects: last create to kreact's log of all running", nil,
			func(rr ruleRepeat) float64 { return (rr.objects.loaded - rr.objects.create).Seconds() }, secs},
		{"objects: first create to every status Ready", nil, func(rr ruleRepeat) float64 { return rr.objects.allReady.Seconds() }, secs},
		{"memory per idle rule, steady (VmRSS after the window)",
			func(rr ruleRepeat) float64 { f, _ := rr.perRule(true); return f },
			func(rr ruleRepeat) float64 { _, o := rr.perRule(true); return o }, kib},
		{"memory per idle rule, peak (VmHWM)",
			func(rr ruleRepeat) float64 { f, _ := rr.perRule(false); return f },
			func(rr ruleRepeat) float64 { _, o := rr.perRule(false); return o }, kib},
		{"CPU s to all running (files: start to ready; objects: first create to every status Ready)",
			func(rr ruleRepeat) float64 { return rr.files.cpuReady },
			func(rr ruleRepeat) float64 { return rr.objects.cpuLoad }, cpu},
		{"CPU s over the idle window",
			func(rr ruleRepeat) float64 { return rr.files.cpuIdle },
			func(rr ruleRepeat) float64 { return rr.objects.cpuIdle }, cpu},
		{"objects: status writes, first create to every status Ready", nil,
			func(rr ruleRepeat) float64 { return float64(rr.objects.writesLoad) }, count},
		{"objects: status writes per minute, first create to every status Ready", nil,
			func(rr ruleRepeat) float64 { return perMinute(rr.objects.writesLoad, rr.objects.allReady) }, count},
		{"objects: status writes per minute, idle (the window after every status Ready)", nil,
			func(rr ruleRepeat) float64 { return perMinute(rr.objects.writesIdle, b.window) }, count},
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | files | objects | objects/files | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	cell := func(f func(ruleRepeat) float64, unit func(float64) string) string {
		if f == nil {
			return "–"
		}
		var xs []float64
		for _, rr := range rs {
			xs = append(xs, f(rr))
		}
		med, lo, hi := spread(xs)
		return fmt.Sprintf("%s (%s–%s)", unit(med), unit(lo), unit(hi))
	}
	for _, r := range rows {
		ratioCell := "–"
		if r.files != nil && r.objects != nil {
			var xs []float64
			for _, rr := range rs {
				if f := r.files(rr); f != 0 {
					xs = append(xs, r.objects(rr)/f)
				}
			}
			med, lo, hi := spread(xs)
			ratioCell = fmt.Sprintf("**%.2f×** (%.2f–%.2f)", med, lo, hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d |\n", r.name, cell(r.files, r.unit), cell(r.objects, r.unit), ratioCell, len(rs))
	}
}

// rulesOf says how many rules: "one rule", "1000 rules".
func rulesOf(n int) string {
	if n == 1 {
		return "one rule"
	}
	return strconv.Itoa(n) + " rules"
}

// ruleSettingsLine describes the rule-objects phase, to print above its
// tables.
func ruleSettingsLine(b *ruleBench, repeats, cores int, goVersion string) string {
	return strings.Join([]string{
		fmt.Sprintf("%d rules over %d namespaces, each watching the ConfigMaps of its namespace (none exist: the rules are idle), a distinct script each", b.n, b.namespaces),
		fmt.Sprintf("files: kreact run -f DIR, one file per namespace; baseline: one rule; objects: kreact run --rule-objects (--status-interval default), Rule objects created by %d clients at once", 32),
		fmt.Sprintf("%d repeats, fresh processes, the objects first in every other repeat", repeats),
		fmt.Sprintf("window %v (memory read at its end; the objects' idle window)", b.window),
		"log level info",
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}
