package engine

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/scripting"
)

// host is what a rule's scripts reach: the rule's informer caches and its
// declared permissions. One host serves every runtime of a rule; it only
// reads, so it is safe for concurrent use.
type host struct{ run *runner }

var _ scripting.Host = (*host)(nil)

func (h *host) ResolveResource(ref string) (apiresource.Resource, error) {
	return h.run.engine.mapper.Resolve(ref)
}

func (h *host) ResolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	return h.run.engine.mapper.ResolveKind(apiVersion, kind)
}

// reader is the watch of the plan's reader for res in namespace.
func (h *host) reader(res apiresource.Resource, namespace string) (*dynamicinformer.Watch, error) {
	i, err := delivery.Reader(h.run.resolved, h.run.plan, res.GVR, namespace)
	if err != nil {
		return nil, err
	}
	return h.run.watches[i], nil
}

func (h *host) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	return dynamicinformer.Reads(h.reader).Get(res, namespace, name)
}

func (h *host) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	return dynamicinformer.Reads(h.reader).List(res, namespace, selector)
}

// Permit refuses what the rule did not declare, before anything reaches
// the API server.
func (h *host) Permit(a actions.Action) error { return h.run.resolved.Permits(a) }

func (h *host) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	// The script's records carry rule and origin already.
	h.run.engine.log.LogAttrs(context.Background(), level, msg, attrs...)
}

func (h *host) Now() time.Time { return h.run.engine.opts.Now() }
