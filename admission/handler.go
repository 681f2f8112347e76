package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// handler serves the admission handlers of one rule: a few runtimes of
// its program, and the caches of its spec.reads. It is safe for
// concurrent use; close it when the rule goes.
type handler struct {
	rule        *rules.Rule
	resolved    *rules.Resolved
	prog        *scripting.Program
	handlers    Handlers
	fingerprint string
	mapper      apiresource.Resolver
	logger      *slog.Logger
	now         func() time.Time
	// host is what the scripts reach: host{h} under kreact run, the
	// test's cache under kreact test (Reviewer).
	host scripting.Host

	// plan is the rule's informers (delivery.Plan); watches holds, at
	// the same index, the watch kreact holds for a read, nil for an
	// informer that serves none here.
	plan    []delivery.Informer
	watches []*dynamicinformer.Watch

	// slots bounds the runtimes (spec.workers); idle holds those not in
	// use.
	slots  chan struct{}
	mu     sync.Mutex
	idle   []*scripting.Runtime
	closed bool
}

// newHandler builds the handler of a rule, whose Fingerprint is fp (the
// caller computed it to compare versions), and subscribes to the caches
// of its spec.reads; informers may be nil, and then reads fail.
func newHandler(r Rule, prog *scripting.Program, fp string, mapper apiresource.Resolver, informers dynamicinformer.Watcher, logger *slog.Logger, now func() time.Time) (*handler, error) {
	res := r.Resolved
	h := &handler{
		rule: res.Rule, resolved: res, prog: prog, handlers: r.Handlers,
		fingerprint: fp,
		mapper:      mapper,
		logger:      logger.With("rule", res.Rule.Name),
		now:         now,
		plan:        delivery.Plan(res),
		slots:       make(chan struct{}, max(1, res.Rule.Workers)),
	}
	h.host = &host{h: h}
	h.watches = make([]*dynamicinformer.Watch, len(h.plan))
	reads := map[schema.GroupResource]bool{}
	for _, rd := range res.Reads {
		reads[rd.GVR.GroupResource()] = true
	}
	for i, inf := range h.plan {
		// Only what spec.reads names: a replica that serves admission
		// does not cache the watched resources for nothing.
		if !inf.Readable || !reads[inf.Key.GVR.GroupResource()] || informers == nil {
			continue
		}
		w, err := informers.WatchFields(inf.Key, "admission "+res.Rule.Name, cache.ResourceEventHandlerFuncs{}, inf.Fields)
		if err != nil {
			h.close()
			return nil, fmt.Errorf("rule %s: read %s: %w", res.Rule.Name, inf.Key.GVR.GroupResource(), err)
		}
		h.watches[i] = w
	}
	return h, nil
}

// synced reports whether the caches the handlers read have their initial
// list.
func (h *handler) synced() bool {
	for _, w := range h.watches {
		if w != nil && !w.HasSynced() {
			return false
		}
	}
	return true
}

// close stops the watches and the idle runtimes; runtimes in use are
// closed when they are released.
func (h *handler) close() {
	h.mu.Lock()
	h.closed = true
	idle := h.idle
	h.idle = nil
	h.mu.Unlock()
	for _, rt := range idle {
		rt.Close()
	}
	for _, w := range h.watches {
		if w != nil {
			w.Stop()
		}
	}
}

// errBusy is the failure of a request that found no runtime free before
// its context ended.
var errBusy = errors.New("no runtime free before the API server's timeout (spec.workers)")

// acquire returns a runtime, waiting for one to be free until ctx ends.
func (h *handler) acquire(ctx context.Context) (*scripting.Runtime, error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, errBusy
	}
	h.mu.Lock()
	if n := len(h.idle); n > 0 {
		rt := h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		return rt, nil
	}
	h.mu.Unlock()
	rt, err := scripting.NewRuntime(h.prog, h.host, scripting.RuntimeOptions{
		Rule:        h.rule.Name,
		Timeout:     h.rule.Timeout,
		MemoryLimit: h.rule.MemoryLimit,
	})
	if err != nil {
		<-h.slots
		return nil, err
	}
	return rt, nil
}

// release hands a runtime back.
func (h *handler) release(rt *scripting.Runtime) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		rt.Close()
	} else {
		h.idle = append(h.idle, rt)
		h.mu.Unlock()
	}
	<-h.slots
}

// resource returns the watched resource of a request's resource: the
// object a handler gets is in the version its rule watches.
func (h *handler) resource(gvr schema.GroupVersionResource) apiresource.Resource {
	for _, w := range h.resolved.Watch {
		if w.Resource.GVR.GroupResource() == gvr.GroupResource() {
			return w.Resource
		}
	}
	return apiresource.Resource{GVR: gvr}
}

// host is what an admission handler's script reaches: the caches of its
// spec.reads, and the log. It permits no action: scripting refuses them
// in admission handlers before they get here.
type host struct{ h *handler }

var _ scripting.Host = (*host)(nil)

func (s *host) ResolveResource(ref string) (apiresource.Resource, error) {
	return s.h.mapper.Resolve(ref)
}

func (s *host) ResolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	return s.h.mapper.ResolveKind(apiVersion, kind)
}

func (s *host) reader(res apiresource.Resource, namespace string) (*dynamicinformer.Watch, error) {
	i, err := delivery.Reader(s.h.resolved, s.h.plan, res.GVR, namespace)
	if err != nil {
		return nil, err
	}
	if err := Readable(s.h.resolved, res.GVR.GroupResource()); err != nil {
		return nil, err
	}
	if s.h.watches[i] == nil {
		// A namespace that only a selected watch covers.
		return nil, fmt.Errorf("rule %q does not cache all of %s for its admission handlers", s.h.rule.Name, res.GVR.GroupResource())
	}
	return s.h.watches[i], nil
}

// Readable returns an error unless the admission handlers of r may read
// gr: only what spec.reads lists, which every replica then caches (the
// watched resources are cached by the leader alone).
func Readable(r *rules.Resolved, gr schema.GroupResource) error {
	for _, rd := range r.Reads {
		if rd.GVR.GroupResource() == gr {
			return nil
		}
	}
	return fmt.Errorf("admission handlers read only what spec.reads lists: add %s to spec.reads of rule %q", gr, r.Rule.Name)
}

func (s *host) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	return dynamicinformer.Reads(s.reader).Get(res, namespace, name)
}

func (s *host) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	return dynamicinformer.Reads(s.reader).List(res, namespace, selector)
}

func (s *host) Permit(actions.Action) error {
	return errAdmissionActions
}

var errAdmissionActions = errors.New("admission handlers cannot queue actions")

func (s *host) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	s.h.logger.LogAttrs(context.Background(), level, msg, attrs...)
}

func (s *host) Now() time.Time { return s.h.now() }
