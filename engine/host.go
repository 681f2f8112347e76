package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/scripting"
)

// host is what a rule's scripts reach: the rule's cache reads and its
// action queue, guarded by its declared permissions.
type host struct{ run *runner }

var _ scripting.Host = (*host)(nil)

func (h *host) ResolveResource(ref string) (discovery.Resource, error) {
	return h.run.engine.mapper.Resolve(ref)
}

func (h *host) ResolveKind(apiVersion, kind string) (discovery.Resource, error) {
	return h.run.engine.mapper.ResolveKind(apiVersion, kind)
}

// reader picks the watch that can answer a read of res in namespace: an
// all-namespaces one, or one on exactly that namespace.
func (h *host) reader(res discovery.Resource, namespace string) (*dynamicinformer.Watch, error) {
	if err := h.run.resolved.Readable(res.GVR); err != nil {
		return nil, err
	}
	for _, w := range h.run.readers[res.GVR.GroupResource()] {
		if ns := w.Key().Namespace; ns == "" || ns == namespace {
			return w, nil
		}
	}
	where := "all namespaces"
	if namespace != "" {
		where = fmt.Sprintf("namespace %q", namespace)
	}
	return nil, fmt.Errorf("rule %q does not cache %s in %s: add it to spec.reads (watches with selectors or other namespaces do not serve reads)",
		h.run.rule.Name, res.GVR.GroupResource(), where)
}

func (h *host) Get(res discovery.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	w, err := h.reader(res, namespace)
	if err != nil {
		return nil, err
	}
	obj, found, err := w.Get(namespace, name)
	if err != nil || !found {
		return nil, err
	}
	return obj, nil
}

func (h *host) List(res discovery.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	w, err := h.reader(res, namespace)
	if err != nil {
		return nil, err
	}
	return w.List(namespace, selector)
}

// Enqueue refuses what the rule did not declare, before anything reaches
// the API server, then queues the action on the rule's own queue.
func (h *host) Enqueue(a actions.Action) error {
	if err := h.run.resolved.Permits(a); err != nil {
		return err
	}
	a.Rule = h.run.rule.Name
	h.run.queue.Enqueue(a)
	return nil
}

func (h *host) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	h.run.log.LogAttrs(context.Background(), level, msg, attrs...)
}

func (h *host) Now() time.Time { return h.run.engine.opts.Now() }
