package ruletest

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// recorder collects what the scripts of one case did. A call abandoned
// after its timeout may still log from its own goroutine, hence the lock.
type recorder struct {
	mu      sync.Mutex
	actions []actions.Action
	logBuf  bytes.Buffer
	logger  *slog.Logger
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logBuf.Write(p)
}

func (r *recorder) record(a actions.Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, a)
}

// recorded returns the actions so far.
func (r *recorder) recorded() []actions.Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.actions)
}

func newRecorder() *recorder {
	r := &recorder{}
	r.logger = slog.New(slog.NewTextHandler(r, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	return r
}

// logs returns the records logged so far, one line each.
func (r *recorder) logs() []string {
	r.mu.Lock()
	s := strings.TrimSuffix(r.logBuf.String(), "\n")
	r.mu.Unlock()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// EnqueueResult records an action of a call that succeeded; it succeeds
// at once. The recorder is the delivery core's Sink in a test.
func (r *recorder) EnqueueResult(a actions.Action, done func(error)) {
	r.record(a)
	done(nil)
}

// Execute is EnqueueResult: a test executes nothing.
func (r *recorder) Execute(_ context.Context, a actions.Action, done func(error)) {
	r.EnqueueResult(a, done)
}

// host is a rule's scripting.Host in a test: it reads the fake cache with
// the engine's restrictions (delivery.Reader over the rule's plan) and the
// same permission checks.
//
// It is used by one Runtime at a time, whose Call the test waits for.
type host struct {
	rule   *rules.Resolved
	plan   []delivery.Informer
	mapper *restmapper.Mapper
	store  *store
	clock  clock.PassiveClock
	rec    *recorder
}

var _ scripting.Host = (*host)(nil)

func (h *host) ResolveResource(ref string) (apiresource.Resource, error) {
	return h.mapper.Resolve(ref)
}

func (h *host) ResolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	return h.mapper.ResolveKind(apiVersion, kind)
}

func (h *host) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	if _, err := delivery.Reader(h.rule, h.plan, res.GVR, namespace); err != nil {
		return nil, err
	}
	return h.store.get(objectKey{res.GVR.GroupResource(), namespace, name}), nil
}

func (h *host) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	if _, err := delivery.Reader(h.rule, h.plan, res.GVR, namespace); err != nil {
		return nil, err
	}
	return h.store.list(res.GVR.GroupResource(), namespace, selector), nil
}

// Permit refuses what the engine's host refuses, with the same errors.
func (h *host) Permit(a actions.Action) error { return h.rule.Permits(a) }

func (h *host) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	h.rec.logger.LogAttrs(context.Background(), level, msg, attrs...)
}

func (h *host) Now() time.Time { return h.clock.Now() }

// storeCache is the delivery.Cache of a rule in a test: what plan[source]
// would hold of the fake cache, cut down to its fields.
type storeCache struct {
	store *store
	plan  []delivery.Informer
	proj  *projector
}

func (c storeCache) Get(source int, namespace, name string) (*unstructured.Unstructured, bool) {
	key := c.plan[source].Key
	obj := c.store.get(objectKey{key.GVR.GroupResource(), namespace, name})
	if ok, err := sees(key, obj); !ok || err != nil {
		return nil, false
	}
	return c.proj.project(source, obj), true
}

func (c storeCache) Newer(source int, namespace, name string, uid types.UID, rv string) (*unstructured.Unstructured, bool) {
	obj, ok := c.Get(source, namespace, name)
	return obj, ok && obj.GetUID() == uid && obj.GetResourceVersion() != rv
}
