package resume

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/internal/unreachable"
	"github.com/kreact/kreact/lifecycle"
)

// Reconnect delays while the API server cannot be reached: short, because
// a refused connection costs the server nothing, and capped at a second,
// so that an informer is never blind for long after the server is back.
const (
	reconnectFirst = 50 * time.Millisecond
	reconnectMax   = time.Second
)

// Object is an item of a ListWatch's lists and watch events: a pointer to
// an API object, such as *unstructured.Unstructured or
// *metav1.PartialObjectMetadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// List is a ListWatch's list type, such as *unstructured.UnstructuredList.
type List interface {
	runtime.Object
	GetResourceVersion() string
	GetContinue() string
	SetContinue(string)
}

// Resource is what a ListWatch lists and watches. client-go's
// dynamic.ResourceInterface and metadata.ResourceInterface are Resources.
type Resource[L List] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Options configures a ListWatch. The zero value is usable.
type Options[O Object] struct {
	// Tweak changes the options of every list and watch (selectors). Nil
	// changes nothing.
	Tweak func(*metav1.ListOptions)
	// Transient is told every failure that the ListWatch retries itself,
	// for logging; it must not block. Nil means nobody is told.
	Transient func(error)
	// Keep says which objects the reflector is told about: the others are
	// dropped from lists and watches as if the server had not sent them.
	// Nil keeps every object.
	Keep func(O) bool
	// Shape, if set, replaces each object that Keep keeps, as soon as it
	// is decoded, by what the informer is to cache (a cut-down or compact
	// form, which must be immutable or owned by the informer from then
	// on): a page of a list is shaped before the next one is asked for,
	// so the decoded objects of a whole list are never held at once.
	// Bookmarks are shaped too, for the reflector checks the type of
	// every event. The informer's example object must be Shape's type.
	// Nil hands the decoded objects over.
	Shape func(O) Object
	// Bookmark, if set, makes the bookmark a relist ends with, at
	// resourceVersion, for objects that cannot be changed. Nil sets the
	// resourceVersion of a new, empty O and shapes it.
	Bookmark func(resourceVersion string) Object
}

// Store is what a ListWatch reads of its informer's cache: the objects
// the informer has applied, and the resourceVersion of the last event it
// applied. client-go's cache.Indexer is a Store.
type Store interface {
	List() []any
	GetByKey(key string) (item any, exists bool, err error)
	LastStoreSyncResourceVersion() string
}

var _ Store = cache.Indexer(nil)

// ObjectList is the list a ListWatch returns: the objects of every page,
// as Shape made them, and the first page's list metadata.
type ObjectList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []runtime.Object
}

// DeepCopyObject copies the list, not its items: the reflector only reads
// them.
func (l *ObjectList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = slices.Clone(l.Items)
	return &c
}

// ListWatch is a cache.ListerWatcher that waits out outages itself (see
// the package doc). L is the list type, T its items' type and O a pointer
// to T. Its methods are called by one reflector, one at a time.
type ListWatch[L List, T any, O interface {
	*T
	Object
}] struct {
	resource  Resource[L]
	items     func(L) *[]T
	tweak     func(*metav1.ListOptions)
	transient func(error)
	keep      func(O) bool
	shape     func(O) Object
	bookmark  func(string) Object

	// store is the informer's cache (SetStore); nil until it is set.
	store Store
	// told is the resourceVersion of the last event the reflector was
	// handed (a list's resourceVersion after a list): what the store's
	// LastStoreSyncResourceVersion says once it has applied everything
	// the reflector was told. Unlike a watch's rv, events that Keep drops
	// do not change it. Only the goroutine that holds the ListWatch uses
	// it: the reflector's, in List and Watch, or the goroutine of the one
	// watch it has open (the reflector stops a watch before it lists or
	// watches again).
	told string
	// count is how many objects the reflector has been told of: the
	// list's, plus the adds, less the deletes, handed over since.
	count atomic.Int64
	// storeWait is how long a relist waits for the store: storeWait, or
	// less in tests.
	storeWait time.Duration
}

// The informers of package dynamicinformer use this instantiation.
var (
	_ cache.ListerWatcher            = (*ListWatch[*unstructured.UnstructuredList, unstructured.Unstructured, *unstructured.Unstructured])(nil)
	_ cache.ListerWatcherWithContext = (*ListWatch[*unstructured.UnstructuredList, unstructured.Unstructured, *unstructured.Unstructured])(nil)
	_ watch.Interface                = (*resumingWatch[*unstructured.UnstructuredList, unstructured.Unstructured, *unstructured.Unstructured])(nil)
)

// New returns a ListWatch of resource; items returns a list's items.
func New[L List, T any, O interface {
	*T
	Object
}](resource Resource[L], items func(L) *[]T, opts Options[O]) *ListWatch[L, T, O] {
	lw := &ListWatch[L, T, O]{resource: resource, items: items, tweak: opts.Tweak, transient: opts.Transient,
		keep: opts.Keep, shape: opts.Shape, bookmark: opts.Bookmark, storeWait: storeWait}
	if lw.tweak == nil {
		lw.tweak = func(*metav1.ListOptions) {}
	}
	if lw.transient == nil {
		lw.transient = func(error) {}
	}
	if lw.shape == nil {
		lw.shape = func(o O) Object { return o }
	}
	if lw.bookmark == nil {
		lw.bookmark = func(rv string) Object {
			o := O(new(T))
			o.SetResourceVersion(rv)
			return lw.shape(o)
		}
	}
	return lw
}

// SetStore gives lw its informer's cache (its Indexer), which a relist
// diffs against (see the package doc). It must be called before the
// informer runs; without it, an expired watch is handed to the reflector,
// which lists again itself after its backoff.
func (lw *ListWatch[L, T, O]) SetStore(s Store) { lw.store = s }

// Len returns how many objects the reflector has been told of: what its
// informer's cache holds, or is about to. It counts rather than asks the
// cache, whose only count is a list of its keys (16 MB at a million
// objects), and is safe to call from any goroutine, as often as a
// progress bar wants.
func (lw *ListWatch[L, T, O]) Len() int { return int(lw.count.Load()) }

// IsWatchListSemanticsUnSupported tells the reflector to list, then
// watch: the watch resumes plain watches only.
func (lw *ListWatch[L, T, O]) IsWatchListSemanticsUnSupported() bool { return true }

// List is ListWithContext without a context.
func (lw *ListWatch[L, T, O]) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// Watch is WatchWithContext without a context.
func (lw *ListWatch[L, T, O]) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// ListWithContext lists, in pages (see listAll) that it returns as one
// list, retrying while the server cannot be reached. The reflector
// replaces its store with the list, at the list's resourceVersion.
func (lw *ListWatch[L, T, O]) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw.tweak(&options)
	list, err := lw.listAll(ctx, options)
	if err != nil {
		return nil, err
	}
	lw.told = list.ResourceVersion
	lw.count.Store(int64(len(list.Items)))
	return list, nil
}

// WatchWithContext returns a watch that resumes itself (see the package
// doc) from options.ResourceVersion.
func (lw *ListWatch[L, T, O]) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	lw.tweak(&options)
	wctx, cancel := context.WithCancel(ctx)
	w := &resumingWatch[L, T, O]{
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

// PageSize is how many objects a ListWatch asks the server for at once.
// An unpaginated list of 50,000 1 KB ConfigMaps held the response body,
// its items as raw JSON and the decoded objects at once (75 + 82 + 220
// MB), and that peak set the process's heap goal for good; in pages,
// only one page's body and raw items are held beside the decoded
// objects. 2,000 rather than client-go's pager default of 500: at
// 100,000 1 KB ConfigMaps, pages of 500 took the sync from 0.7 to 1.14
// times a bare informer's streamed list, 2,000 to 0.94 times, for a peak
// within the noise of 500's (hack/bench's sync phase).
const PageSize = 2000

// listAll lists the objects of options in pages of PageSize, retrying
// each page while the server cannot be reached, and returns the objects
// Keep keeps as one list, with the first page's metadata: the pages of one
// list are one snapshot, at its resourceVersion.
//
// Every list asks for the newest state (resourceVersion ""), which the
// API server serves from its watch cache in pages (ListFromCacheSnapshot,
// on by default since 1.34): the reflector's first list asks for "0",
// any state, which the watch cache serves whole, ignoring the limit, and
// its later ones for a state at least as new as one it saw, which the
// newest is too. A continue token that expired (410) between pages
// starts the list over.
func (lw *ListWatch[L, T, O]) listAll(ctx context.Context, options metav1.ListOptions) (*ObjectList, error) {
	options.ResourceVersion, options.ResourceVersionMatch = "", ""
	options.Limit, options.Continue = PageSize, ""
	all := &ObjectList{}
	for {
		var page L
		err := lw.retry(ctx, func() (err error) {
			page, err = lw.resource.List(ctx, options)
			return err
		})
		switch {
		case err != nil && options.Continue != "" && isExpired(err):
			all, options.Continue = &ObjectList{}, ""
			continue
		case err != nil:
			return nil, err
		}
		if options.Continue == "" {
			all.ResourceVersion = page.GetResourceVersion()
		}
		items := *lw.items(page)
		for i := range items {
			if obj := O(&items[i]); lw.keep == nil || lw.keep(obj) {
				all.Items = append(all.Items, lw.shape(obj))
			}
		}
		next := page.GetContinue()
		if next == "" {
			return all, nil
		}
		options.Continue = next
	}
}

// retry calls f until it succeeds, fails with an error that waiting does
// not cure, or ctx ends.
func (lw *ListWatch[L, T, O]) retry(ctx context.Context, f func() error) error {
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

// storePoll is how often a relist reads the store's resourceVersion while
// it waits for the store to apply what the reflector was told: the
// informer applies events at memory speed, so the wait is short, and a
// relist is rare.
const storePoll = 5 * time.Millisecond

// storeWait bounds that wait. The informer applies what it was told in
// well under a second even at a million objects; a store that has not
// caught up by then was not told what the ListWatch thinks (the reflector
// dropped an event it could not store), and the relist gives way to the
// reflector's own (ErrStoreBehind), which is exact whatever the store
// holds.
const storeWait = time.Minute

// ErrStoreBehind says that a relist gave up waiting for the informer's
// store to apply what the reflector was told (see storeWait): the expired
// watch is handed to the reflector, which lists again and replaces its
// store itself, after its backoff.
var ErrStoreBehind = errors.New("cannot resume an expired watch: the informer's store has not applied what its reflector was told; " +
	"the informer lists again after client-go's backoff")

// ErrNoStoreVersion says that a relist cannot know what the reflector
// knows: the ListWatch has no store (SetStore), or client-go's AtomicFIFO
// feature gate is off (KUBE_FEATURE_AtomicFIFO=false), without which an
// informer's store does not say which events it has applied. The expired
// watch is then handed to the reflector, which lists again and replaces
// its store itself, after its backoff.
var ErrNoStoreVersion = errors.New("cannot resume an expired watch: the informer's store does not report the resourceVersion it has applied " +
	"(client-go's AtomicFIFO feature gate is off, KUBE_FEATURE_AtomicFIFO=false); the informer lists again after client-go's backoff")

// storeVersioned reports whether lw's store says which events it has
// applied.
func (lw *ListWatch[L, T, O]) storeVersioned() bool {
	return lw.store != nil && clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO)
}

// caughtUp waits until the store has applied every event the reflector
// was told, and reports whether it has: false when ctx ends, or when the
// store has not caught up within lw.storeWait. The informer applies the
// reflector's events in the order it received them (client-go's
// RealFIFO), and its store records the resourceVersion of the last one,
// bookmarks included, so the store then holds exactly what the reflector
// was told.
func (lw *ListWatch[L, T, O]) caughtUp(ctx context.Context) bool {
	if lw.store.LastStoreSyncResourceVersion() == lw.told {
		return true
	}
	t := time.NewTicker(storePoll)
	defer t.Stop()
	deadline := time.Now().Add(lw.storeWait)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if lw.store.LastStoreSyncResourceVersion() == lw.told {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
		}
	}
}

// relist lists the objects and returns the events that bring the store
// from what the reflector was told to the list, ending with a bookmark at
// the list's resourceVersion, which it also returns. It diffs against the
// store once the store has applied everything the reflector was told: a
// listed object the store lacks is Added, one it holds at another
// resourceVersion Modified, and one it holds that the list lacks Deleted,
// with the state the store holds (shaped objects are immutable).
func (lw *ListWatch[L, T, O]) relist(ctx context.Context, template metav1.ListOptions) ([]watch.Event, string, error) {
	options := metav1.ListOptions{LabelSelector: template.LabelSelector, FieldSelector: template.FieldSelector,
		ShardSelector: template.ShardSelector}
	list, err := lw.listAll(ctx, options)
	if err != nil {
		return nil, "", err
	}
	if !lw.caughtUp(ctx) {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		return nil, "", ErrStoreBehind
	}
	listed := make(map[string]struct{}, len(list.Items))
	var events []watch.Event
	for _, item := range list.Items {
		obj := item.(Object)
		key := objectKey(obj)
		listed[key] = struct{}{}
		switch stored, ok, _ := lw.store.GetByKey(key); {
		case !ok:
			events = append(events, watch.Event{Type: watch.Added, Object: obj})
		case resourceVersionOf(stored) != obj.GetResourceVersion():
			events = append(events, watch.Event{Type: watch.Modified, Object: obj})
		}
	}
	for _, stored := range lw.store.List() {
		if obj, ok := stored.(Object); ok {
			if _, ok := listed[objectKey(obj)]; !ok {
				events = append(events, watch.Event{Type: watch.Deleted, Object: obj})
			}
		}
	}
	rv := list.GetResourceVersion()
	return append(events, watch.Event{Type: watch.Bookmark, Object: lw.bookmark(rv)}), rv, nil
}

// resourceVersionOf returns the resourceVersion of an object of the store.
func resourceVersionOf(obj any) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	return ""
}

// resumingWatch is the watch a ListWatch hands to the reflector.
type resumingWatch[L List, T any, O interface {
	*T
	Object
}] struct {
	lw       *ListWatch[L, T, O]
	ctx      context.Context
	cancel   context.CancelFunc
	template metav1.ListOptions
	// rv is the resourceVersion to resume from; "" means list first. Only
	// the goroutine of run uses it (open, before run starts).
	rv     string
	result chan watch.Event
	done   chan struct{}
}

// ResultChan returns the events; it is closed after Stop, or after an
// error that waiting does not cure has been sent as an Error event.
func (w *resumingWatch[L, T, O]) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and waits for its goroutine.
func (w *resumingWatch[L, T, O]) Stop() {
	w.cancel()
	<-w.done
}

// open opens a watch of the server from w.rv, listing first when w.rv is
// empty or has expired. It returns the events of that list, to be sent
// before the watch's own: when the watch from a list's resourceVersion
// has expired too, the next list's events replace them, for they bring
// the store, which has not been told the first list's, to the newer list.
func (w *resumingWatch[L, T, O]) open() (watch.Interface, []watch.Event, error) {
	var pending []watch.Event
	for {
		if w.rv == "" {
			if !w.lw.storeVersioned() {
				w.lw.transient(ErrNoStoreVersion)
				return nil, nil, apierrors.NewResourceExpired(ErrNoStoreVersion.Error())
			}
			events, rv, err := w.lw.relist(w.ctx, w.template)
			if errors.Is(err, ErrStoreBehind) {
				w.lw.transient(err)
				return nil, nil, apierrors.NewResourceExpired(err.Error())
			}
			if err != nil {
				return nil, nil, err
			}
			pending, w.rv = events, rv
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
func (w *resumingWatch[L, T, O]) run(inner watch.Interface, pending []watch.Event) {
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
func (w *resumingWatch[L, T, O]) drain(inner watch.Interface) (broken error, fatal *watch.Event) {
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

// forward shapes ev and sends it. It returns false when the watch is
// stopping.
func (w *resumingWatch[L, T, O]) forward(ev watch.Event) bool {
	var told Object
	switch obj := ev.Object.(type) {
	case O:
		if ev.Type != watch.Bookmark && w.lw.keep != nil && !w.lw.keep(obj) {
			// Not ours, but a later point to resume from.
			if rv := obj.GetResourceVersion(); rv != "" {
				w.rv = rv
			}
			return true
		}
		if rv := obj.GetResourceVersion(); rv != "" {
			w.rv = rv
		}
		told = w.lw.shape(obj)
		ev.Object = told
	case Object:
		// A relist's events, already shaped, and its deletes, the store's
		// objects.
		told = obj
	}
	if !w.send(ev) {
		return false
	}
	if told != nil {
		// What the store records once it has applied ev.
		w.lw.told = told.GetResourceVersion()
		switch ev.Type {
		case watch.Added:
			w.lw.count.Add(1)
		case watch.Deleted:
			w.lw.count.Add(-1)
		}
	}
	return true
}

func (w *resumingWatch[L, T, O]) send(ev watch.Event) bool {
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
func objectKey(obj metav1.Object) string { return cache.MetaObjectToName(obj).String() }

// sleep waits d, jittered by up to a fifth, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	return lifecycle.Sleep(ctx, d+time.Duration(rand.Int64N(int64(d)/5+1)))
}
