package finalizers

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// ReleaseStrays removes rule's finalizer from the objects that carry it
// but that none of the targets (the rule's watches, with their selectors)
// selects any more: objects whose labels left the selector while kreact
// was away, or that a new version of the rule no longer selects. No
// running rule would ever call onDelete for them or let them go, so they
// could not be deleted. It returns how many it released.
//
// Per resource, it lists what the targets select (on the server, so field
// selectors mean what they mean there), then every object in the targets'
// namespaces, and releases those that carry the finalizer and were not
// selected. A resource whose targets have no selector is skipped: nothing
// of it can have left. If listing what is selected fails, nothing of that
// resource is released. An object that enters a selector between the two
// lists may lose the finalizer; the rule, which sees it enter, puts it
// back, as for any live object that lost it.
func ReleaseStrays(ctx context.Context, client dynamic.Interface, rule string, targets []Target, opts ReleaseOptions) (int, error) {
	r := releasing{client: client, f: Name(rule), opts: opts}
	var order []schema.GroupVersionResource
	byResource := map[schema.GroupVersionResource][]Target{}
	for _, t := range targets {
		if _, ok := byResource[t.Resource.GVR]; !ok {
			order = append(order, t.Resource.GVR)
		}
		byResource[t.Resource.GVR] = append(byResource[t.Resource.GVR], t)
	}
	for _, gvr := range order {
		group := byResource[gvr]
		selects, scoped := false, map[string]bool{}
		var scopes []Target
		for _, t := range group {
			selects = selects || t.LabelSelector != "" || t.FieldSelector != ""
			if !scoped[t.Namespace] {
				scoped[t.Namespace] = true
				scopes = append(scopes, Target{Resource: t.Resource, Namespace: t.Namespace})
			}
		}
		if !selects {
			continue
		}
		if scoped[""] { // every namespace
			scopes = []Target{{Resource: group[0].Resource}}
		}
		selected := map[types.UID]bool{}
		if err := each(ctx, client, group, func(_ Target, obj *unstructured.Unstructured) { selected[obj.GetUID()] = true }); err != nil {
			r.errs = append(r.errs, fmt.Errorf("what the rule selects, so nothing of it released: %w", err))
			continue
		}
		err := each(ctx, client, scopes, func(t Target, obj *unstructured.Unstructured) {
			if !selected[obj.GetUID()] && Has(obj, r.f) {
				r.release(ctx, t, obj)
			}
		})
		r.errs = append(r.errs, err)
	}
	return r.released, errors.Join(r.errs...)
}
