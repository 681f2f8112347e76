package finalizers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/qualified"
)

// Prefix is the domain of kreact's finalizers.
const Prefix = "kreact.dev/"

// Name returns the finalizer of rule: kreact.dev/RULE, with RULE cut to
// fit a qualified name (qualified.Name: a team's Rule is NAMESPACE.NAME).
func Name(rule string) string { return Prefix + qualified.Name(rule) }

// Has reports whether obj carries finalizer f.
func Has(obj *unstructured.Unstructured, f string) bool {
	return obj != nil && slices.Contains(obj.GetFinalizers(), f)
}

// Terminating reports whether obj has been deleted and waits for its
// finalizers.
func Terminating(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetDeletionTimestamp() != nil
}

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// AddPatch returns the JSON patch that adds f to obj's finalizers: an
// append when the list exists, else the list, guarded by the object's
// resourceVersion so that a list another client created meanwhile is not
// replaced.
func AddPatch(obj *unstructured.Unstructured, f string) []byte {
	var ops []op
	if _, found, _ := unstructured.NestedStringSlice(obj.Object, "metadata", "finalizers"); found {
		ops = []op{{Op: "test", Path: "/metadata/uid", Value: string(obj.GetUID())}, {Op: "add", Path: "/metadata/finalizers/-", Value: f}}
	} else {
		ops = []op{{Op: "test", Path: "/metadata/resourceVersion", Value: obj.GetResourceVersion()}, {Op: "add", Path: "/metadata/finalizers", Value: []string{f}}}
	}
	data, _ := json.Marshal(ops)
	return data
}

// RemovePatch returns the JSON patch that removes f from obj's finalizers,
// guarded by a test that the entry is still f, or nil when obj does not
// carry f.
func RemovePatch(obj *unstructured.Unstructured, f string) []byte {
	i := slices.Index(obj.GetFinalizers(), f)
	if i < 0 {
		return nil
	}
	path := fmt.Sprintf("/metadata/finalizers/%d", i)
	data, _ := json.Marshal([]op{{Op: "test", Path: path, Value: f}, {Op: "remove", Path: path}})
	return data
}

// Action returns the patch of obj in res as an action of rule. It is
// kreact's own action, not the script's: its Origin says so.
func Action(rule string, res apiresource.Resource, obj *unstructured.Unstructured, patch []byte) actions.Action {
	return actions.Action{
		Rule:       rule,
		Verb:       actions.Patch,
		Resource:   res.GVR,
		Kind:       res.Kind,
		APIVersion: res.GVR.GroupVersion().String(),
		Namespaced: res.Namespaced,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
		PatchType:  types.JSONPatchType,
		PatchData:  patch,
		Origin:     diag.Position{Rule: rule, File: "finalizer " + Name(rule)},
		Guarded:    true,
	}
}

// Target is what Release scans: a resource, in a namespace ("" for all),
// with optional label and field selectors.
type Target struct {
	Resource      apiresource.Resource
	Namespace     string
	LabelSelector string
	FieldSelector string
}

// ReleaseOptions configure Release. The zero value releases silently.
type ReleaseOptions struct {
	// Released, if not nil, is called with each object once its finalizer
	// is removed (the object as it was listed or last read), from the
	// goroutine that called Release. Nil reports nothing.
	Released func(t Target, obj *unstructured.Unstructured)
}

// Release removes rule's finalizer from every object of the targets that
// carries it, and returns how many it released. An object whose patch
// fails because it changed meanwhile is read again and retried; other
// errors are collected and returned after the rest is done. It is what
// kreact does for a rule that is removed, and what `kreact finalizers
// release` does by hand.
func Release(ctx context.Context, client dynamic.Interface, rule string, targets []Target, opts ReleaseOptions) (int, error) {
	r := releasing{client: client, f: Name(rule), opts: opts}
	listErr := each(ctx, client, targets, func(t Target, obj *unstructured.Unstructured) { r.release(ctx, t, obj) })
	return r.released, errors.Join(append(r.errs, listErr)...)
}

// releasing removes one finalizer from object after object, counting
// what it released and collecting the errors.
type releasing struct {
	client   dynamic.Interface
	f        string
	opts     ReleaseOptions
	released int
	errs     []error
}

// release removes r.f from obj, an object of t, and reports it to
// opts.Released.
func (r *releasing) release(ctx context.Context, t Target, obj *unstructured.Unstructured) {
	obj, err := release(ctx, r.client.Resource(t.Resource.GVR), obj, r.f)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	if obj != nil {
		r.released++
		if r.opts.Released != nil {
			r.opts.Released(t, obj)
		}
	}
}

// each calls fn with every object of the targets, page by page. A list
// that fails ends that target; its error is returned, joined with the
// others, once every target has been listed.
func each(ctx context.Context, client dynamic.Interface, targets []Target, fn func(t Target, obj *unstructured.Unstructured)) error {
	var errs []error
	for _, t := range targets {
		var rc dynamic.ResourceInterface = client.Resource(t.Resource.GVR)
		if t.Resource.Namespaced && t.Namespace != "" {
			rc = client.Resource(t.Resource.GVR).Namespace(t.Namespace)
		}
		listOpts := metav1.ListOptions{LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector, Limit: 500}
		for {
			list, err := rc.List(ctx, listOpts)
			if err != nil {
				errs = append(errs, fmt.Errorf("list %s: %w", t.Resource.GVR.GroupResource(), err))
				break
			}
			for i := range list.Items {
				fn(t, &list.Items[i])
			}
			if listOpts.Continue = list.GetContinue(); listOpts.Continue == "" {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Carried returns the kreact finalizers (Prefix…) that the objects of the
// targets carry, with how many objects carry each: what `kreact
// finalizers release` suggests when no object carries the rule's.
func Carried(ctx context.Context, client dynamic.Interface, targets []Target) (map[string]int, error) {
	carried := map[string]int{}
	err := each(ctx, client, targets, func(_ Target, obj *unstructured.Unstructured) {
		for _, f := range obj.GetFinalizers() {
			if strings.HasPrefix(f, Prefix) {
				carried[f]++
			}
		}
	})
	return carried, err
}

// Back returns the objects of the targets, among those released (by
// UID), that carry rule's finalizer again: a kreact that still runs the
// rule puts it back at once.
func Back(ctx context.Context, client dynamic.Interface, rule string, targets []Target, released map[types.UID]bool) ([]*unstructured.Unstructured, error) {
	f := Name(rule)
	var back []*unstructured.Unstructured
	err := each(ctx, client, targets, func(_ Target, obj *unstructured.Unstructured) {
		if released[obj.GetUID()] && Has(obj, f) && !Terminating(obj) {
			back = append(back, obj)
		}
	})
	return back, err
}

// removeTries bounds how many times Remove patches one object.
const removeTries = 5

// Remove removes f from obj with patch, which sends a RemovePatch of the
// state it is given. The patch names f's place in the list and tests it
// first, so the API server refuses it (Invalid, or Conflict) when another
// client changed the object meanwhile: then newer, told of the refusal,
// returns the object's newer state (nil when the object is gone), and the
// removal is made again from it, up to removeTries times. A refusal of
// another kind, or newer's error, ends it. It returns the state f was
// removed from, or nil when there was nothing to remove (f not carried,
// or the object gone). Release reads the newer state from the API server;
// package delivery, after an onDelete, from its informer's cache.
func Remove(obj *unstructured.Unstructured, f string, patch func(obj *unstructured.Unstructured, data []byte) error,
	newer func(obj *unstructured.Unstructured, refused error) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	for range removeTries {
		data := RemovePatch(obj, f)
		if data == nil {
			return nil, nil
		}
		err := patch(obj, data)
		switch {
		case err == nil:
			return obj, nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case !apierrors.IsInvalid(err) && !apierrors.IsConflict(err):
			return nil, err
		}
		if obj, err = newer(obj, err); err != nil || obj == nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("release %s: the object kept changing", ref(obj))
}

// release removes f from one object, reading it again from the API server
// when the guarded patch finds it changed (Remove).
func release(ctx context.Context, ri dynamic.NamespaceableResourceInterface, obj *unstructured.Unstructured, f string) (*unstructured.Unstructured, error) {
	var rc dynamic.ResourceInterface = ri
	if ns := obj.GetNamespace(); ns != "" {
		rc = ri.Namespace(ns)
	}
	patch := func(obj *unstructured.Unstructured, data []byte) error {
		if _, err := rc.Patch(ctx, obj.GetName(), types.JSONPatchType, data, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("release %s: %w", ref(obj), err)
		}
		return nil
	}
	newer := func(obj *unstructured.Unstructured, _ error) (*unstructured.Unstructured, error) {
		cur, err := rc.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("release %s: %w", obj.GetName(), err)
		}
		return cur, nil
	}
	return Remove(obj, f, patch, newer)
}

// ref names obj as namespace/name, or name when it is cluster-scoped.
func ref(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Waiting is what waits on a rule's finalizer: the objects deleted whose
// onDelete has not yet finished, and since when the oldest of them waits
// (its deletionTimestamp; zero when none waits). engine.Engine.Finalizing
// reports it for every rule with spec.finalizer, and package metrics
// exports it.
type Waiting struct {
	Rule    string
	Objects int
	Oldest  time.Time
}
