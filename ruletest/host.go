package ruletest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/discovery"
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

// host is a rule's scripting.Host in a test: it reads the fake cache with
// the same restrictions as the engine's host and records actions instead
// of queueing them, after the same permission checks.
//
// It is used by one Runtime at a time, whose Call the test waits for.
type host struct {
	rule   *rules.Resolved
	mapper *restmapper.Mapper
	store  *store
	now    time.Time
	rec    *recorder
	// readers are the namespaces whose objects of a resource the rule's
	// informers hold, as the engine sets them up: watches without
	// selectors serve reads in their namespaces ("" for all), and every
	// resource of spec.reads is cached in all namespaces.
	readers map[schema.GroupResource][]string
}

var _ scripting.Host = (*host)(nil)

func newHost(r *rules.Resolved, mapper *restmapper.Mapper, st *store, now time.Time, rec *recorder) *host {
	h := &host{
		rule:    r,
		mapper:  mapper,
		store:   st,
		now:     now,
		rec:     rec,
		readers: map[schema.GroupResource][]string{},
	}
	for _, w := range r.Watch {
		if w.Watch.LabelSelector != "" || w.Watch.FieldSelector != "" {
			continue
		}
		gr := w.Resource.GVR.GroupResource()
		if len(w.Watch.Namespaces) == 0 {
			h.readers[gr] = append(h.readers[gr], "")
		}
		h.readers[gr] = append(h.readers[gr], w.Watch.Namespaces...)
	}
	for _, res := range r.Reads {
		gr := res.GVR.GroupResource()
		if !slices.Contains(h.readers[gr], "") {
			h.readers[gr] = append(h.readers[gr], "")
		}
	}
	return h
}

func (h *host) ResolveResource(ref string) (discovery.Resource, error) {
	return h.mapper.Resolve(ref)
}

func (h *host) ResolveKind(apiVersion, kind string) (discovery.Resource, error) {
	return h.mapper.ResolveKind(apiVersion, kind)
}

// readable mirrors the engine host's reader: the rule must be allowed to
// read the resource, and one of its informers must hold the namespace.
func (h *host) readable(res discovery.Resource, namespace string) error {
	if err := h.rule.Readable(res.GVR); err != nil {
		return err
	}
	for _, ns := range h.readers[res.GVR.GroupResource()] {
		if ns == "" || ns == namespace {
			return nil
		}
	}
	where := "all namespaces"
	if namespace != "" {
		where = fmt.Sprintf("namespace %q", namespace)
	}
	return fmt.Errorf("rule %q does not cache %s in %s: add it to spec.reads (watches with selectors or other namespaces do not serve reads)",
		h.rule.Rule.Name, res.GVR.GroupResource(), where)
}

func (h *host) Get(res discovery.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	if err := h.readable(res, namespace); err != nil {
		return nil, err
	}
	return h.store.get(objectKey{res.GVR.GroupResource(), namespace, name}), nil
}

func (h *host) List(res discovery.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	if err := h.readable(res, namespace); err != nil {
		return nil, err
	}
	return h.store.list(res.GVR.GroupResource(), namespace, selector), nil
}

// Enqueue refuses what the engine's host refuses, with the same errors,
// and records the rest.
func (h *host) Enqueue(a actions.Action) error {
	if err := h.rule.Permits(a); err != nil {
		return err
	}
	a.Rule = h.rule.Rule.Name
	h.rec.record(a)
	return nil
}

func (h *host) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	h.rec.logger.LogAttrs(context.Background(), level, msg, attrs...)
}

func (h *host) Now() time.Time { return h.now }
