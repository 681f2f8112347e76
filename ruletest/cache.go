package ruletest

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/dynamicinformer"
)

// store is the fake cache: every object of a case, by resource (any
// version), namespace and name. It plays the informers' stores; unlike
// them it holds every object, and the host decides what a rule may see.
type store struct {
	objects map[objectKey]*unstructured.Unstructured
}

type objectKey struct {
	gr        schema.GroupResource
	namespace string
	name      string
}

func newStore() *store { return &store{objects: map[objectKey]*unstructured.Unstructured{}} }

func keyOf(o Object) objectKey {
	return objectKey{o.Resource.GVR.GroupResource(), o.Object.GetNamespace(), o.Object.GetName()}
}

func (s *store) get(k objectKey) *unstructured.Unstructured { return s.objects[k] }

// put stores a copy, so that nothing a case does reaches the File.
func (s *store) put(o Object) { s.objects[keyOf(o)] = o.Object.DeepCopy() }

func (s *store) remove(k objectKey) { delete(s.objects, k) }

// list returns the objects of gr in namespace ("" for all) that match
// selector, sorted by namespace and name so that tests are repeatable (the
// order of an informer's list is unspecified).
func (s *store) list(gr schema.GroupResource, namespace string, selector labels.Selector) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for k, o := range s.objects {
		if k.gr == gr && (namespace == "" || k.namespace == namespace) && selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}

// sees reports whether the informer of key w would hold obj (nil is
// held by none): the namespace is w's (or w has none), and the label and
// field selectors match. The API server evaluates field selectors; here each
// field is looked up in the object by its dotted path, which is exact for
// metadata.name and metadata.namespace and a fair stand-in for the few
// other fields some resources support (status.phase of Pods).
func sees(w dynamicinformer.Key, obj *unstructured.Unstructured) (bool, error) {
	if obj == nil {
		return false, nil
	}
	if w.Namespace != "" && w.Namespace != obj.GetNamespace() {
		return false, nil
	}
	if w.LabelSelector != "" {
		sel, err := labels.Parse(w.LabelSelector)
		if err != nil {
			return false, fmt.Errorf("labelSelector %q: %w", w.LabelSelector, err)
		}
		if !sel.Matches(labels.Set(obj.GetLabels())) {
			return false, nil
		}
	}
	if w.FieldSelector != "" {
		sel, err := fields.ParseSelector(w.FieldSelector)
		if err != nil {
			return false, fmt.Errorf("fieldSelector %q: %w", w.FieldSelector, err)
		}
		set := fields.Set{}
		for _, req := range sel.Requirements() {
			if v, ok := delivery.FieldValue(obj.Object, req.Field); ok {
				set[req.Field] = v
			}
		}
		if !sel.Matches(set) {
			return false, nil
		}
	}
	return true, nil
}
