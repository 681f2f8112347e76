package dynamicinformer

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/internal/unreachable"
)

// Reconnect delays of a resumingListWatch while the API server cannot be
// reached: short, because a refused connection costs the server nothing,
// and capped at a second, so that an informer is never blind for long
// after the server is back.
const (
	reconnectFirst = 50 * time.Millisecond
	reconnectMax   = time.Second
)

// resumingListWatch is the ListerWatcher of kreact's informers. It exists
// because client-go's reflector waits after every ListAndWatch that ends
// with an error, or with an expired watch, on an exponential backoff
// (0.8 s doubling to 30 s, jittered up to 60 s, reset only after two quiet
// minutes) that SharedIndexInformer does not let anyone configure. An
// informer that lived through a few API-server restarts was blind for up
// to a minute after the last one.
//
// So the reflector is never told about a failure that waiting cures. A
// List or Watch that cannot reach the server is retried within a second
// until it can. The watch handed to the reflector is a proxy that outlives
// the server's watches: when one breaks or times out it opens the next
// from the last resourceVersion it forwarded; when that version has
// expired (410), it lists, and forwards the difference between the list
// and what it told the reflector before (adds, updates, and deletes with
// the last known state), then a bookmark at the list's resourceVersion.
// The reflector sees one long watch, and its informer sees every change,
// deletes included.
//
// Errors that waiting does not cure (403, 404, a bad selector) reach the
// reflector as before, and from it the instance's watch-error handler.
// Streaming lists (WatchList) are turned off for these informers: the
// proxy resumes plain watches only.
type resumingListWatch struct {
	resource dynamic.ResourceInterface
	tweak    func(*metav1.ListOptions)
	// transient is told every failure that is retried here, for logging.
	transient func(error)
	// keep, if set, says which objects the reflector is told about: the
	// others are dropped from lists and watches as if the server had not
	// sent them (client-side shard filtering).
	keep func(*unstructured.Unstructured) bool

	mu sync.Mutex
	// known is what the reflector has been told about each object (by key):
	// the last state it was given, with that state's resourceVersion read
	// before it was handed over (the informer changes cached objects in
	// place, see StripForCache).
	known map[string]knownObject
}

type knownObject struct {
	resourceVersion string
	object          *unstructured.Unstructured
}

var (
	_ cache.ListerWatcher            = (*resumingListWatch)(nil)
	_ cache.ListerWatcherWithContext = (*resumingListWatch)(nil)
)

func newResumingListWatch(resource dynamic.ResourceInterface, tweak func(*metav1.ListOptions), transient func(error)) *resumingListWatch {
	return &resumingListWatch{resource: resource, tweak: tweak, transient: transient, known: map[string]knownObject{}}
}

// IsWatchListSemanticsUnSupported tells the reflector to list, then
// watch: the proxy resumes plain watches only.
func (lw *resumingListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// List is ListWithContext without a context.
func (lw *resumingListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// Watch is WatchWithContext without a context.
func (lw *resumingListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// ListWithContext lists, retrying while the server cannot be reached, and
// records the objects as what the reflector knows.
func (lw *resumingListWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw.tweak(&options)
	var list *unstructured.UnstructuredList
	err := lw.retry(ctx, func() (err error) {
		list, err = lw.resource.List(ctx, options)
		return err
	})
	if err != nil {
		return nil, err
	}
	lw.mu.Lock()
	list.Items = lw.filter(list.Items)
	if options.Continue == "" {
		// A new list replaces what the reflector knew; later pages add to it.
		lw.known = make(map[string]knownObject, len(list.Items))
	}
	for i := range list.Items {
		lw.rememberLocked(&list.Items[i])
	}
	lw.mu.Unlock()
	return list, nil
}

// WatchWithContext returns a watch that resumes itself (see the type's
// doc) from options.ResourceVersion.
func (lw *resumingListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	lw.tweak(&options)
	wctx, cancel := context.WithCancel(ctx)
	w := &resumingWatch{
		lw:       lw,
		ctx:      wctx,
		cancel:   cancel,
		template: options,
		rv:       options.ResourceVersion,
		result:   make(chan watch.Event),
		done:     make(chan struct{}),
	}
	// The first watch is opened here, so that what waiting does not cure
	// is returned to the reflector as the error of this call.
	inner, pending, err := w.open()
	if err != nil {
		cancel()
		return nil, err
	}
	go w.run(inner, pending)
	return w, nil
}

// retry calls f until it succeeds, fails with an error that waiting does
// not cure, or ctx ends.
func (lw *resumingListWatch) retry(ctx context.Context, f func() error) error {
	delay := reconnectFirst
	for {
		err := f()
		if err == nil || !isTransient(err) || ctx.Err() != nil {
			return err
		}
		lw.transient(err)
		if !sleep(ctx, delay) {
			return ctx.Err()
		}
		delay = min(2*delay, reconnectMax)
	}
}

// rememberLocked records obj as what the reflector knows of its key.
func (lw *resumingListWatch) rememberLocked(obj *unstructured.Unstructured) {
	lw.known[objectKey(obj)] = knownObject{resourceVersion: obj.GetResourceVersion(), object: obj}
}

// filter returns the items keep keeps, in place.
func (lw *resumingListWatch) filter(items []unstructured.Unstructured) []unstructured.Unstructured {
	if lw.keep == nil {
		return items
	}
	kept := items[:0]
	for i := range items {
		if lw.keep(&items[i]) {
			kept = append(kept, items[i])
		}
	}
	clear(items[len(kept):])
	return kept
}

// relist lists the objects and returns the events that bring the
// reflector from what it knows to the list, ending with a bookmark at the
// list's resourceVersion, which it also returns.
func (lw *resumingListWatch) relist(ctx context.Context, template metav1.ListOptions) ([]watch.Event, string, error) {
	options := metav1.ListOptions{LabelSelector: template.LabelSelector, FieldSelector: template.FieldSelector,
		ShardSelector: template.ShardSelector}
	var list *unstructured.UnstructuredList
	err := lw.retry(ctx, func() (err error) {
		list, err = lw.resource.List(ctx, options)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	list.Items = lw.filter(list.Items)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	listed := make(map[string]knownObject, len(list.Items))
	var events []watch.Event
	for i := range list.Items {
		obj := &list.Items[i]
		key := objectKey(obj)
		rv := obj.GetResourceVersion()
		listed[key] = knownObject{resourceVersion: rv, object: obj}
		switch before, ok := lw.known[key]; {
		case !ok:
			events = append(events, watch.Event{Type: watch.Added, Object: obj})
		case before.resourceVersion != rv:
			events = append(events, watch.Event{Type: watch.Modified, Object: obj})
		}
	}
	for key, before := range lw.known {
		if _, ok := listed[key]; !ok {
			events = append(events, watch.Event{Type: watch.Deleted, Object: before.object})
		}
	}
	lw.known = listed
	rv := list.GetResourceVersion()
	bookmark := &unstructured.Unstructured{}
	bookmark.SetResourceVersion(rv)
	return append(events, watch.Event{Type: watch.Bookmark, Object: bookmark}), rv, nil
}

// resumingWatch is the watch a resumingListWatch hands to the reflector.
type resumingWatch struct {
	lw       *resumingListWatch
	ctx      context.Context
	cancel   context.CancelFunc
	template metav1.ListOptions
	// rv is the resourceVersion to resume from; "" means list first. Only
	// the goroutine of run uses it (open, before run starts).
	rv     string
	result chan watch.Event
	done   chan struct{}
}

var _ watch.Interface = (*resumingWatch)(nil)

// ResultChan returns the events; it is closed after Stop, or after an
// error that waiting does not cure has been sent as an Error event.
func (w *resumingWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and waits for its goroutine.
func (w *resumingWatch) Stop() {
	w.cancel()
	<-w.done
}

// open opens a watch of the server from w.rv, listing first when w.rv is
// empty or has expired. It returns the events of those lists, to be sent
// before the watch's own.
func (w *resumingWatch) open() (watch.Interface, []watch.Event, error) {
	var pending []watch.Event
	for {
		if w.rv == "" {
			events, rv, err := w.lw.relist(w.ctx, w.template)
			if err != nil {
				return nil, nil, err
			}
			pending, w.rv = append(pending, events...), rv
		}
		options := w.template
		options.ResourceVersion = w.rv
		var inner watch.Interface
		err := w.lw.retry(w.ctx, func() (err error) {
			inner, err = w.lw.resource.Watch(w.ctx, options)
			return err
		})
		switch {
		case err == nil:
			return inner, pending, nil
		case isExpired(err):
			w.rv = ""
		default:
			return nil, nil, err
		}
	}
}

// run forwards the events of inner, and of the watches that follow it,
// until Stop or an error that waiting does not cure.
func (w *resumingWatch) run(inner watch.Interface, pending []watch.Event) {
	defer close(w.done)
	defer close(w.result)
	defer func() {
		if inner != nil {
			inner.Stop()
		}
	}()
	for {
		for _, ev := range pending {
			if !w.forward(ev) {
				return
			}
		}
		pending = nil
		if inner == nil {
			var err error
			if inner, pending, err = w.open(); err != nil {
				if w.ctx.Err() == nil {
					w.send(watch.Event{Type: watch.Error, Object: statusOf(err)})
				}
				return
			}
			continue
		}
		opened := time.Now()
		broken, fatal := w.drain(inner)
		inner.Stop()
		inner = nil
		switch {
		case w.ctx.Err() != nil:
			return
		case fatal != nil:
			w.send(*fatal)
			return
		case broken != nil:
			w.lw.transient(broken)
		}
		if time.Since(opened) < time.Second {
			// A server that closes watches at once must not be hammered.
			if !sleep(w.ctx, reconnectMax) {
				return
			}
		}
	}
}

// drain forwards inner's events until it ends. It returns the error that
// ended it if a new watch cures it (nil for a plain close), or the Error
// event to pass on if not.
func (w *resumingWatch) drain(inner watch.Interface) (broken error, fatal *watch.Event) {
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-w.ctx.Done():
			return nil, nil
		case ev, ok = <-inner.ResultChan():
		}
		if !ok {
			return nil, nil
		}
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			switch {
			case isExpired(err):
				w.rv = ""
				return err, nil
			case isTransient(err):
				return err, nil
			}
			return nil, &ev
		}
		if !w.forward(ev) {
			return nil, nil
		}
	}
}

// forward records ev as known to the reflector and sends it. It returns
// false when the watch is stopping.
func (w *resumingWatch) forward(ev watch.Event) bool {
	if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
		if ev.Type != watch.Bookmark && w.lw.keep != nil && !w.lw.keep(obj) {
			// Not ours, but a later point to resume from.
			if rv := obj.GetResourceVersion(); rv != "" {
				w.rv = rv
			}
			return true
		}
		rv := obj.GetResourceVersion()
		if ev.Type != watch.Bookmark {
			w.lw.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(w.lw.known, objectKey(obj))
			} else {
				w.lw.rememberLocked(obj)
			}
			w.lw.mu.Unlock()
		}
		if rv != "" {
			w.rv = rv
		}
	}
	return w.send(ev)
}

func (w *resumingWatch) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// isTransient reports errors that waiting cures: the server cannot be
// reached, is starting or stopping, or is busy (unreachable.Is), or
// failed inside (500): a list or watch asks again, unlike an action,
// whose retries a 500 uses up.
func isTransient(err error) bool {
	return unreachable.Is(err) || apierrors.IsInternalError(err)
}

// isExpired reports a resourceVersion the server no longer has.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// statusOf turns err into a Status object for an Error event.
func statusOf(err error) runtime.Object {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return &s
	}
	return &apierrors.NewInternalError(err).ErrStatus
}

// objectKey is the informer's key of obj: namespace/name, or name.
func objectKey(obj *unstructured.Unstructured) string { return cache.MetaObjectToName(obj).String() }

// sleep waits d, jittered by up to a fifth, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
