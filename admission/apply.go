package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	admregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Applier writes the webhook configurations to the cluster.
type Applier interface {
	// Apply makes the cluster's configurations v and m: a configuration
	// without webhooks is deleted, a nil one left alone.
	Apply(ctx context.Context, v *admregv1.ValidatingWebhookConfiguration, m *admregv1.MutatingWebhookConfiguration) error
	// Delete deletes both configurations of that name, if they exist.
	Delete(ctx context.Context, name string) error
}

// FieldManager is the field manager of what kreact applies.
const FieldManager = "kreact"

var (
	validatingGVR = admregv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	mutatingGVR   = admregv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
)

// NewApplier returns an Applier that writes with server-side apply
// through client. Replicas that apply the same configurations agree.
func NewApplier(client dynamic.Interface) Applier { return &applier{client: client} }

type applier struct{ client dynamic.Interface }

var _ Applier = (*applier)(nil)

func (a *applier) Apply(ctx context.Context, v *admregv1.ValidatingWebhookConfiguration, m *admregv1.MutatingWebhookConfiguration) error {
	if v != nil {
		if err := a.apply(ctx, validatingGVR, v.Name, len(v.Webhooks), v); err != nil {
			return err
		}
	}
	if m == nil {
		return nil
	}
	return a.apply(ctx, mutatingGVR, m.Name, len(m.Webhooks), m)
}

func (a *applier) apply(ctx context.Context, gvr schema.GroupVersionResource, name string, hooks int, obj any) error {
	if hooks == 0 {
		return a.delete(ctx, gvr, name)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = a.client.Resource(gvr).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: new(true)})
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", gvr.Resource, name, err)
	}
	return nil
}

func (a *applier) Delete(ctx context.Context, name string) error {
	if err := a.delete(ctx, validatingGVR, name); err != nil {
		return err
	}
	return a.delete(ctx, mutatingGVR, name)
}

func (a *applier) delete(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	err := a.client.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", gvr.Resource, name, err)
	}
	return nil
}

// sortedHandlers returns the handlers by rule name, so that the
// configurations do not depend on map order.
func sortedHandlers(hs map[string]*handler) []*handler {
	out := make([]*handler, 0, len(hs))
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		out = append(out, hs[name])
	}
	return out
}
