package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	cgrestmapper "k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kreact/kreact/hack/internal/benchstat"
	"github.com/kreact/kreact/internal/testcluster"
)

// The large-CRD phase (-crds N): kreact's start and idle memory with N
// CRDs of Cluster API's size installed, against the bare discovery client
// (runBareDiscovery), and the same without them.

const (
	// crdNamespace holds the ConfigMaps both processes watch.
	crdNamespace = "bench-crds"
	// crdConfigMaps is how many ConfigMaps it holds.
	crdConfigMaps = 100
	// crdSchemaBytes is the size of each version's openAPIV3Schema as
	// JSON; each CRD serves two versions, as Cluster API's do (v1beta1 and
	// v1beta2), so a CRD holds about twice that: 240 KB, the size of
	// Cluster API's largest (machinepools, clusterclasses).
	crdSchemaBytes = 120 << 10
	// crdMaxDepth is how deep the generated schemas nest objects.
	crdMaxDepth = 6
)

// crdGroup is the API group of generated CRD i.
func crdGroup(i int) string { return fmt.Sprintf("g%03d.bench.kreact.dev", i) }

// crdPlural is the resource of generated CRD i.
func crdPlural(i int) string { return fmt.Sprintf("widget%03ds", i) }

// largeCRD returns generated CRD i: a namespaced resource of its own
// group with two served versions, each with a schema of about
// schemaBytes of JSON (see schemaGen). The same i gives the same CRD.
func largeCRD(i, schemaBytes int) *unstructured.Unstructured {
	kind := fmt.Sprintf("Widget%03d", i)
	g := &schemaGen{r: rand.New(rand.NewPCG(uint64(i), 39))}
	var versions []any
	for j, v := range []string{"v1beta1", "v1beta2"} {
		versions = append(versions, map[string]any{
			"name": v, "served": true, "storage": j == 1,
			"schema":       map[string]any{"openAPIV3Schema": g.root(kind, schemaBytes)},
			"subresources": map[string]any{"status": map[string]any{}},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crdPlural(i) + "." + crdGroup(i)},
		"spec": map[string]any{
			"group": crdGroup(i), "scope": "Namespaced",
			"names": map[string]any{
				"plural": crdPlural(i), "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List",
				"categories": []any{"bench-widgets"},
			},
			"versions": versions,
		},
	}}
}

// schemaGen generates structural schemas that look like a generated
// controller's (kubebuilder): nested objects and arrays of objects, many
// properties, each with a description of a sentence or three, enums,
// formats and required lists.
type schemaGen struct{ r *rand.Rand }

// crdWords are the generated descriptions' and property names' words.
var crdWords = strings.Fields(`machine cluster control plane infrastructure template reference version
	bootstrap provider node pool replicas strategy rollout deployment health check timeout
	condition status ready failure reason message label annotation selector namespace name
	kind api group object field value default minimum maximum network subnet address port
	endpoint certificate secret key image registry region zone volume disk size count policy
	taint toleration priority weight interval period deadline remediation drain delete`)

func (g *schemaGen) word() string { return crdWords[g.r.IntN(len(crdWords))] }

// sentence is a description: 8 to 40 words.
func (g *schemaGen) sentence() string {
	n := 8 + g.r.IntN(33)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

// name is a camelCase property name of one to three words.
func (g *schemaGen) name() string {
	n := 1 + g.r.IntN(3)
	var b strings.Builder
	for i := range n {
		w := g.word()
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// root is a top-level schema of about size bytes: apiVersion, kind,
// metadata, and a spec and a status sharing the rest four to one.
func (g *schemaGen) root(kind string, size int) map[string]any {
	spec, _ := g.object(1, size*4/5)
	status, _ := g.object(1, size/5)
	return map[string]any{
		"type":        "object",
		"description": kind + " is " + g.sentence(),
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
			"kind":       map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
			"metadata":   map[string]any{"type": "object"},
			"spec":       spec,
			"status":     status,
		},
	}
}

// object is an object schema whose JSON is about budget bytes (at least
// one property), and its size as counted.
func (g *schemaGen) object(depth, budget int) (map[string]any, int) {
	desc := g.sentence()
	used := len(desc) + 60
	props := map[string]any{}
	var required []any
	for len(props) == 0 || used < budget {
		name := g.name()
		if _, dup := props[name]; dup {
			continue
		}
		left := budget - used
		var p map[string]any
		var n int
		switch x := g.r.IntN(10); {
		case depth < crdMaxDepth && left > 3000 && x < 2:
			p, n = g.object(depth+1, left/(2+g.r.IntN(3)))
		case depth < crdMaxDepth && left > 3000 && x < 3:
			items, m := g.object(depth+1, left/(3+g.r.IntN(3)))
			d := g.sentence()
			p = map[string]any{"type": "array", "description": d, "items": items}
			n = m + len(d) + 50
		default:
			p, n = g.leaf()
		}
		props[name] = p
		used += n + len(name) + 4
		if g.r.IntN(6) == 0 {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "description": desc, "properties": props}
	if len(required) > 0 {
		slices.SortFunc(required, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		s["required"] = required
	}
	return s, used
}

// leaf is a scalar (or a map of strings) and its size as JSON.
func (g *schemaGen) leaf() (map[string]any, int) {
	desc := g.sentence()
	var p map[string]any
	switch g.r.IntN(6) {
	case 0:
		p = map[string]any{"type": "integer", "format": "int32", "minimum": int64(0)}
	case 1:
		p = map[string]any{"type": "boolean"}
	case 2:
		enum := []any{}
		for range 2 + g.r.IntN(4) {
			if w := g.word(); !slices.Contains(enum, any(w)) {
				enum = append(enum, w)
			}
		}
		p = map[string]any{"type": "string", "enum": enum}
	case 3:
		p = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	case 4:
		p = map[string]any{"type": "string", "format": "date-time"}
	default:
		p = map[string]any{"type": "string", "maxLength": int64(253), "minLength": int64(1)}
	}
	p["description"] = desc
	data, _ := json.Marshal(p)
	return p, len(data)
}

// installLargeCRDs applies n generated CRDs (server-side apply, as large
// CRDs are applied: client-side apply would copy each whole into an
// annotation, which may not exceed 256 KiB) and waits until discovery
// serves each one's resource.
func installLargeCRDs(ctx context.Context, client dynamic.Interface, cfg *rest.Config, n int) error {
	crds := client.Resource(testcluster.CRDGVR)
	var done atomic.Int64
	start := time.Now()
	err := parallel(4, n, func(i int) error {
		u := largeCRD(i, crdSchemaBytes)
		if _, err := crds.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "bench-crds", Force: true}); err != nil {
			return fmt.Errorf("apply CRD %s: %w", u.GetName(), err)
		}
		if d := done.Add(1); d%50 == 0 {
			fmt.Fprintf(os.Stderr, "  %d CRDs applied (%.1f/s)\n", d, float64(d)/time.Since(start).Seconds())
		}
		return nil
	})
	if err != nil {
		return err
	}
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return poll(ctx, 10*time.Minute, func() bool {
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			return false
		}
		served := 0
		for _, l := range lists {
			if strings.HasSuffix(l.GroupVersion, ".bench.kreact.dev/v1beta2") {
				served += len(l.APIResources)
			}
		}
		return served >= n
	})
}

// crdResult is one process's figures for one start.
type crdResult struct {
	// crds is how many generated CRDs were installed.
	crds, repeat int
	controller   string
	// start is from the process's start to its readiness.
	start time.Duration
	// hwmReady is VmHWM at readiness; hwm VmHWM at the end of the idle
	// window; rss VmRSS then.
	hwmReady, hwm, rss int64
}

// measureCRDStart starts one process (kreact, or the bare discovery
// client as "bare") on crdNamespace, waits for it to be ready, then for
// window, and reads its memory.
func measureCRDStart(ctx context.Context, name string, f flags, s settings, crds, repeat int) (crdResult, error) {
	r := crdResult{crds: crds, repeat: repeat, controller: name}
	start := time.Now()
	var c *controller
	var err error
	switch name {
	case "kreact":
		c, err = startKreact(f.kreact, os.TempDir(), crdNamespace, s)
	case "bare":
		c, err = startBareDiscovery(crdNamespace, s)
	default:
		err = fmt.Errorf("unknown controller %q", name)
	}
	if err != nil {
		return r, err
	}
	defer c.stop()
	if err := c.waitReady(ctx, f.syncTimeout); err != nil {
		return r, err
	}
	r.start = time.Since(start)
	pid := c.cmd.Process.Pid
	if r.hwmReady, _, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	if err := sleep(ctx, f.crdWindow); err != nil {
		return r, err
	}
	if r.hwm, r.rss, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	if f.crdProfile != "" && c.pprofAddr != "" {
		path := filepath.Join(f.crdProfile, fmt.Sprintf("heap-%d-crds-%s-%d.pprof", crds, name, repeat+1))
		if err := saveHeap(ctx, c.pprofAddr, path); err != nil {
			fmt.Fprintf(os.Stderr, "  heap profile of %s: %v\n", name, err)
		}
	}
	return r, nil
}

// saveHeap writes the heap profile served at addr to path.
func saveHeap(ctx context.Context, addr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// runCRDPhase measures each controller's start without generated CRDs,
// then installs n of them and measures again: each time repeats runs of
// each, alternating which goes first.
func runCRDPhase(ctx context.Context, client dynamic.Interface, cfg *rest.Config, f flags, s settings, controllers []string) ([]crdResult, error) {
	fmt.Fprintf(os.Stderr, "creating %d ConfigMaps in %s\n", crdConfigMaps, crdNamespace)
	if err := setupSync(ctx, client, crdNamespace, crdConfigMaps); err != nil {
		return nil, fmt.Errorf("setup %s: %w", crdNamespace, err)
	}
	var results []crdResult
	for k, crds := range []int{0, f.crds} {
		if crds > 0 {
			fmt.Fprintf(os.Stderr, "applying %d CRDs of %d KiB schemas, two versions each\n", crds, crdSchemaBytes>>10)
			began := time.Now()
			if err := installLargeCRDs(ctx, client, cfg, crds); err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "  %d CRDs served %s after the first apply\n", crds, time.Since(began).Round(100*time.Millisecond))
		}
		for rep := range f.crdRepeats {
			order := controllers
			if (k*f.crdRepeats+rep)%2 == 1 {
				order = slices.Clone(controllers)
				slices.Reverse(order)
			}
			for _, name := range order {
				fmt.Fprintf(os.Stderr, "%d CRDs, repeat %d: %s\n", crds, rep+1, name)
				r, err := measureCRDStart(ctx, name, f, s, crds, rep)
				if err != nil {
					return nil, fmt.Errorf("%d CRDs, %s: %w", crds, name, err)
				}
				results = append(results, r)
			}
		}
	}
	return results, nil
}

// crdReport writes every start, then per number of CRDs each process's
// medians and the kreact/bare ratios taken per repeat, median (min–max),
// then what the CRDs cost each process: its medians with them less its
// medians without.
func crdReport(w io.Writer, results []crdResult) {
	fmt.Fprintln(w, "| CRDs | repeat | process | start to ready | peak RSS at ready | peak RSS | idle RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s |\n", r.crds, r.repeat+1, r.controller,
			r.start.Round(10*time.Millisecond), mib(r.hwmReady), mib(r.hwm), mib(r.rss))
	}
	type pair struct{ kreact, bare *crdResult }
	var counts []int
	byCount := map[int]map[int]*pair{}
	for i := range results {
		r := &results[i]
		if byCount[r.crds] == nil {
			byCount[r.crds] = map[int]*pair{}
			counts = append(counts, r.crds)
		}
		p := byCount[r.crds][r.repeat]
		if p == nil {
			p = &pair{}
			byCount[r.crds][r.repeat] = p
		}
		if r.controller == "kreact" {
			p.kreact = r
		} else {
			p.bare = r
		}
	}
	metrics := []func(*crdResult) float64{
		func(r *crdResult) float64 { return r.start.Seconds() },
		func(r *crdResult) float64 { return float64(r.hwmReady) },
		func(r *crdResult) float64 { return float64(r.hwm) },
		func(r *crdResult) float64 { return float64(r.rss) },
	}
	format := []func(float64) string{
		func(v float64) string { return fmt.Sprintf("%.2f s", v) },
		func(v float64) string { return mib(int64(v)) },
		func(v float64) string { return mib(int64(v)) },
		func(v float64) string { return mib(int64(v)) },
	}
	medians := map[int]map[string][]float64{} // by count, then process
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| CRDs | | start to ready | peak RSS at ready | peak RSS | idle RSS | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, n := range counts {
		var repeats []int
		for rep := range byCount[n] {
			repeats = append(repeats, rep)
		}
		slices.Sort(repeats)
		medians[n] = map[string][]float64{}
		for _, name := range []string{"kreact", "bare"} {
			var cells []string
			runs := 0
			for m, metric := range metrics {
				var xs []float64
				for _, rep := range repeats {
					r := byCount[n][rep].kreact
					if name == "bare" {
						r = byCount[n][rep].bare
					}
					if r != nil {
						xs = append(xs, metric(r))
					}
				}
				med, _, _ := spread(xs)
				medians[n][name] = append(medians[n][name], med)
				cells = append(cells, format[m](med))
				runs = len(xs)
			}
			fmt.Fprintf(w, "| %d | %s, median | %s | %d |\n", n, name, strings.Join(cells, " | "), runs)
		}
		var cells []string
		runs := 0
		for _, metric := range metrics {
			var xs []float64
			for _, rep := range repeats {
				p := byCount[n][rep]
				if p.kreact != nil && p.bare != nil && metric(p.bare) != 0 {
					xs = append(xs, metric(p.kreact)/metric(p.bare))
				}
			}
			med, lo, hi := spread(xs)
			cells = append(cells, fmt.Sprintf("**%.2f×** (%.2f–%.2f)", med, lo, hi))
			runs = len(xs)
		}
		fmt.Fprintf(w, "| %d | kreact/bare, median (min–max) | %s | %d |\n", n, strings.Join(cells, " | "), runs)
	}
	if len(counts) < 2 {
		return
	}
	lo, hi := counts[0], counts[len(counts)-1]
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| what %d CRDs add (medians) | start to ready | peak RSS at ready | peak RSS | idle RSS |\n", hi-lo)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, name := range []string{"kreact", "bare"} {
		with, without := medians[hi][name], medians[lo][name]
		if len(with) != len(metrics) || len(without) != len(metrics) {
			continue
		}
		cells := []string{fmt.Sprintf("%+.2f s", with[0]-without[0])}
		for m := 1; m < len(metrics); m++ {
			cells = append(cells, fmt.Sprintf("%+.0f MiB", (with[m]-without[m])/(1<<20)))
		}
		fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
}

// crdSettingsLine describes the large-CRD phase, to print above its
// tables.
func crdSettingsLine(n, repeats int, window time.Duration, s settings, cores int, goVersion string) string {
	return strings.Join([]string{
		fmt.Sprintf("start with no generated CRD and with %d (two served versions of a %d KiB openAPIV3Schema each, applied server-side)", n, crdSchemaBytes>>10),
		fmt.Sprintf("%d ConfigMaps watched; kreact: one rule (kreact run -f), bare: client-go's memory-cached discovery, a deferred RESTMapper and one dynamic informer", crdConfigMaps),
		fmt.Sprintf("%d repeats, alternating which process goes first", repeats),
		fmt.Sprintf("idle RSS %v after ready", window),
		fmt.Sprintf("client QPS %g burst %d", s.qps, s.burst),
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}

// startBareDiscovery runs this program as the bare discovery client on
// namespace.
func startBareDiscovery(namespace string, s settings) (*controller, error) {
	self, err := bareBinary()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	c := &controller{name: "bare", pprofAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), ready: make(chan struct{}), stopped: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	c.cmd = exec.Command(self, "-bare-discovery", "-kubeconfig", s.kubeconfig, "-namespace", namespace, "-pprof", c.pprofAddr,
		"-qps", strconv.FormatFloat(s.qps, 'f', -1, 64), "-burst", strconv.Itoa(s.burst))
	if err := c.startSaysSynced(); err != nil {
		return nil, err
	}
	return c, nil
}

// runBareDiscovery is the large-CRD phase's baseline: the least a Go
// controller of ConfigMaps does that resolves its resource by name, as
// one that watches what it is told must: client-go's memory-cached
// discovery client, a deferred discovery RESTMapper on it, and one
// dynamic informer on what the mapper resolved. It prints "synced" once
// the informer has listed, and then waits for SIGTERM.
func runBareDiscovery(kubeconfig, namespace, pprofAddr string, qps float64, burst int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	cfg.UserAgent = "bench-bare-discovery"
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if pprofAddr != "" {
		go func() { _ = http.ListenAndServe(pprofAddr, nil) }()
	}
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := cgrestmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: "configmaps"})
	if err != nil {
		return fmt.Errorf("resolve configmaps: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	informer := cgdynamicinformer.NewFilteredDynamicInformer(client, gvr, namespace, 0, cache.Indexers{}, nil)
	var events atomic.Int64
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { events.Add(1) },
		UpdateFunc: func(_, _ any) { events.Add(1) },
	})
	go informer.Informer().Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		return fmt.Errorf("cache did not sync")
	}
	fmt.Println("synced")
	<-ctx.Done()
	fmt.Printf("events %d\n", events.Load())
	return nil
}
