package finalizers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func carrying(rv string, finalizers ...string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{}}
	o.SetNamespace("ns")
	o.SetName("a")
	o.SetResourceVersion(rv)
	o.SetFinalizers(finalizers)
	return o
}

// Remove's patch names the finalizer's place; a refusal because the
// object changed is made again from the newer state newer gives, and
// every other outcome ends it.
func TestRemove(t *testing.T) {
	const f = "kreact.dev/r"
	outOfPlace := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", nil)
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "a")
	for _, tt := range []struct {
		name string
		// refusals are the patches' answers in turn (nil after them).
		refusals []error
		// states are what newer returns in turn (the last one after them).
		states  []*unstructured.Unstructured
		patches []string // the places each patch names
		removed string   // the resourceVersion removed from, "" for none
		err     string
	}{
		{name: "removed at once", patches: []string{"1"}, removed: "1"},
		{name: "refused, made again from the newer state", refusals: []error{outOfPlace},
			states: []*unstructured.Unstructured{carrying("2", f)}, patches: []string{"1", "0"}, removed: "2"},
		{name: "refused, and the newer state no longer carries it", refusals: []error{outOfPlace},
			states: []*unstructured.Unstructured{carrying("2", "other")}, patches: []string{"1"}},
		{name: "refused, and the object is gone", refusals: []error{outOfPlace}, states: []*unstructured.Unstructured{nil}, patches: []string{"1"}},
		{name: "not found: nothing to remove", refusals: []error{gone}, patches: []string{"1"}},
		{name: "another refusal ends it", refusals: []error{errors.New("forbidden")}, patches: []string{"1"}, err: "forbidden"},
		{name: "an object that keeps changing", refusals: []error{outOfPlace, outOfPlace, outOfPlace, outOfPlace, outOfPlace},
			states: []*unstructured.Unstructured{carrying("2", "other", f)}, patches: []string{"1", "1", "1", "1", "1"}, err: "kept changing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var patches []string
			patch := func(obj *unstructured.Unstructured, data []byte) error {
				_, place, _ := strings.Cut(string(data), `"path":"/metadata/finalizers/`)
				patches = append(patches, place[:strings.IndexByte(place, '"')])
				if n := len(patches); n <= len(tt.refusals) {
					return fmt.Errorf("patch: %w", tt.refusals[n-1])
				}
				return nil
			}
			reads := 0
			newer := func(*unstructured.Unstructured, error) (*unstructured.Unstructured, error) {
				reads++
				return tt.states[min(reads, len(tt.states))-1], nil
			}
			removed, err := Remove(carrying("1", "other", f), f, patch, newer)
			if err == nil && tt.err != "" || err != nil && !strings.Contains(err.Error(), tt.err) || err != nil && tt.err == "" {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if got := strings.Join(patches, ","); got != strings.Join(tt.patches, ",") {
				t.Errorf("patches at %s, want %s", got, strings.Join(tt.patches, ","))
			}
			switch {
			case tt.removed == "" && removed != nil:
				t.Errorf("removed from %s, want nothing", removed.GetResourceVersion())
			case tt.removed != "" && (removed == nil || removed.GetResourceVersion() != tt.removed):
				t.Errorf("removed from %v, want resourceVersion %s", removed, tt.removed)
			}
		})
	}
}

// A refusal newer cannot answer (package delivery, when its cache does
// not bring the newer state in time) ends Remove with that refusal.
func TestRemoveEndsWithNewersError(t *testing.T) {
	refusal := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", nil)
	_, err := Remove(carrying("1", "kreact.dev/r"), "kreact.dev/r",
		func(*unstructured.Unstructured, []byte) error { return refusal },
		func(_ *unstructured.Unstructured, refused error) (*unstructured.Unstructured, error) {
			return nil, refused
		})
	if !errors.Is(err, refusal) {
		t.Errorf("err = %v, want the refusal", err)
	}
}
