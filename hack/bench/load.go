package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// annotation is where both controllers mirror data.seq.
const annotation = "bench/seq"

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// tracker records the writes that no controller has reacted to yet, and
// how long each took to become visible. A write of seq to an object is
// reacted to when each annotation it wants shows seq or a later value:
// the whole-path phases want the one mirror annotation, the many-rules
// phase one per rule that selects the object.
type tracker struct {
	mu        sync.Mutex
	pending   map[string][]write // by object key, in seq order
	left      int
	latencies []time.Duration
}

type write struct {
	seq  int64
	at   time.Time
	want []string // annotations that must reach seq
}

func newTracker() *tracker { return &tracker{pending: map[string][]write{}} }

// wrote records a write about to be sent.
func (t *tracker) wrote(key string, seq int64, want []string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[key] = append(t.pending[key], write{seq, at, want})
	t.left++
}

// failed forgets a write the API server refused.
func (t *tracker) failed(key string, seq int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.pending[key]
	for i, w := range ws {
		if w.seq == seq {
			t.pending[key] = append(ws[:i], ws[i+1:]...)
			t.left--
			return
		}
	}
}

// saw records an object's annotations, values decoded: the writes, in
// order, whose every wanted annotation has reached their seq are done.
func (t *tracker) saw(key string, annotations map[string]int64, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.pending[key]
	n := 0
	for n < len(ws) && reached(ws[n], annotations) {
		t.latencies = append(t.latencies, now.Sub(ws[n].at))
		n++
	}
	if n > 0 {
		t.pending[key] = ws[n:]
		t.left -= n
	}
}

func reached(w write, annotations map[string]int64) bool {
	for _, a := range w.want {
		if annotations[a] < w.seq {
			return false
		}
	}
	return true
}

// mirrored is what the whole-path phases' writes want: the annotation.
var mirrored = []string{annotation}

// sawMirror is saw of the whole-path phases: value is the annotation's.
func (t *tracker) sawMirror(key, value string, now time.Time) {
	if seq, err := strconv.ParseInt(value, 10, 64); err == nil {
		t.saw(key, map[string]int64{annotation: seq}, now)
	}
}

// outstanding is how many writes wait for a reaction.
func (t *tracker) outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.left
}

// forget drops the writes still waiting, so that a phase that did not
// drain does not count in the next.
func (t *tracker) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = map[string][]write{}
	t.left = 0
}

// takeLatencies returns the latencies so far and starts a new list.
func (t *tracker) takeLatencies() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.latencies
	t.latencies = nil
	return l
}

// observe feeds the annotation of every ConfigMap of namespace into the
// tracker until ctx ends.
func observe(ctx context.Context, client dynamic.Interface, namespace string, t *tracker) error {
	inf := cgdynamicinformer.NewFilteredDynamicInformer(client, configMaps, namespace, 0, cache.Indexers{}, nil).Informer()
	seen := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			t.sawMirror(u.GetName(), u.GetAnnotations()[annotation], time.Now())
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("observer did not sync")
	}
	return nil
}

// setup creates namespace with n ConfigMaps whose seq is already mirrored.
func setup(ctx context.Context, client dynamic.Interface, namespace string, n int) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
	if _, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	return parallel(32, n, func(i int) error {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": objectName(i), "namespace": namespace, "annotations": map[string]any{annotation: "0"}},
			"data":     map[string]any{"seq": "0"},
		}}
		_, err := client.Resource(configMaps).Namespace(namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

func objectName(i int) string { return fmt.Sprintf("cm-%05d", i) }

// writer sends data.seq updates.
type writer struct {
	client    dynamic.Interface
	namespace string
	objects   int
	tracker   *tracker
	seq       *atomic.Int64
	// locks serialise the writes to each object: two writes of one object
	// in flight at once may be applied out of order, leaving a lower seq
	// as the final value and a higher one that no controller can ever
	// mirror.
	locks []sync.Mutex
}

// update sets data.seq of object i to the next value.
func (w *writer) update(ctx context.Context, i int) {
	w.locks[i].Lock()
	defer w.locks[i].Unlock()
	name := objectName(i)
	seq := w.seq.Add(1)
	w.tracker.wrote(name, seq, mirrored, time.Now())
	patch := fmt.Appendf(nil, `{"data":{"seq":%q}}`, strconv.FormatInt(seq, 10))
	if _, err := w.client.Resource(configMaps).Namespace(w.namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		w.tracker.failed(name, seq)
	}
}

// steady writes at rate per second for d, to random objects, and returns
// how many writes it made and how long that took. When the API server
// cannot take the rate, the writes fall behind and take longer: the rate
// reached is writes/elapsed.
func (w *writer) steady(ctx context.Context, rate float64, d time.Duration) (int, time.Duration) {
	return paced(ctx, rate, d, w.objects, func(i int) { w.update(ctx, i) })
}

// paced calls write with a random index below n, rate times a second for
// d, from 64 senders, and returns how many calls it made and how long
// they took: a write that the API server holds up delays the ones after
// it once every sender waits.
func paced(ctx context.Context, rate float64, d time.Duration, n int, write func(i int)) (int, time.Duration) {
	const senders = 64
	jobs := make(chan int, senders)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := range jobs {
				write(i)
			}
		})
	}
	start := time.Now()
	sent := 0
	for ctx.Err() == nil {
		at := time.Duration(float64(sent) / rate * float64(time.Second))
		if at >= d {
			break
		}
		if wait := time.Until(start.Add(at)); wait > 0 {
			time.Sleep(wait)
		}
		jobs <- rand.IntN(n)
		sent++
	}
	close(jobs)
	wg.Wait()
	return sent, time.Since(start)
}

// burst sends updates as fast as the senders go, spread evenly over the
// objects.
func (w *writer) burst(ctx context.Context, updates int) {
	_ = parallel(32, updates, func(i int) error {
		w.update(ctx, i%w.objects)
		return nil
	})
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(workers, n int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	wg.Wait()
	return first
}
