package dynamicinformer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestStripForCache(t *testing.T) {
	managed := []any{map[string]any{"manager": "kubectl", "operation": "Apply", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{
			name: "both dropped, other annotations kept",
			in: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{
				"name": "a", "managedFields": managed,
				"annotations": map[string]any{LastAppliedAnnotation: "{}", "keep": "me"},
			}},
			want: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{
				"name": "a", "annotations": map[string]any{"keep": "me"},
			}},
		},
		{
			name: "annotations left empty are removed",
			in: map[string]any{"metadata": map[string]any{
				"name": "a", "annotations": map[string]any{LastAppliedAnnotation: "{}"},
			}},
			want: map[string]any{"metadata": map[string]any{"name": "a"}},
		},
		{
			name: "managed fields only",
			in:   map[string]any{"metadata": map[string]any{"name": "a", "managedFields": managed}},
			want: map[string]any{"metadata": map[string]any{"name": "a"}},
		},
		{
			name: "nothing to strip",
			in:   map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}}},
			want: map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}}},
		},
		{
			name: "no metadata",
			in:   map[string]any{"kind": "Thing"},
			want: map[string]any{"kind": "Thing"},
		},
		{
			name: "metadata of the wrong type is left alone",
			in:   map[string]any{"metadata": "bogus"},
			want: map[string]any{"metadata": "bogus"},
		},
		{
			name: "null annotations",
			in:   map[string]any{"metadata": map[string]any{"annotations": nil}},
			want: map[string]any{"metadata": map[string]any{"annotations": nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tt.in}
			for range 2 { // idempotent
				got, err := StripForCache(u)
				if err != nil {
					t.Fatal(err)
				}
				if got != u {
					t.Fatalf("StripForCache returned %p, want the same object %p (in place)", got, u)
				}
				if diff := cmp.Diff(tt.want, u.Object); diff != "" {
					t.Fatalf("object (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestStripForCacheOtherTypes(t *testing.T) {
	t.Run("nil", func(t *testing.T) {
		if got, err := StripForCache(nil); got != nil || err != nil {
			t.Fatalf("StripForCache(nil) = %v, %v", got, err)
		}
		var u *unstructured.Unstructured
		if got, err := StripForCache(u); got != u || err != nil {
			t.Fatalf("StripForCache(nil *Unstructured) = %v, %v", got, err)
		}
	})
	t.Run("deleted final state unknown", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
			"name": "a", "managedFields": []any{}, "annotations": map[string]any{LastAppliedAnnotation: "{}"},
		}}}
		in := cache.DeletedFinalStateUnknown{Key: "a", Obj: u}
		got, err := StripForCache(in)
		if err != nil || got != any(in) {
			t.Fatalf("StripForCache(tombstone) = %v, %v", got, err)
		}
		if diff := cmp.Diff(map[string]any{"metadata": map[string]any{"name": "a"}}, u.Object); diff != "" {
			t.Fatalf("inner object (-want +got):\n%s", diff)
		}
	})
	t.Run("typed metav1.Object", func(t *testing.T) {
		o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name:          "a",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:   map[string]string{LastAppliedAnnotation: "{}", "keep": "me"},
		}}
		for range 2 {
			if _, err := StripForCache(o); err != nil {
				t.Fatal(err)
			}
			if o.ManagedFields != nil {
				t.Errorf("managedFields = %v, want nil", o.ManagedFields)
			}
			if diff := cmp.Diff(map[string]string{"keep": "me"}, o.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		}
	})
	t.Run("not an object", func(t *testing.T) {
		if got, err := StripForCache("x"); got != "x" || err != nil {
			t.Fatalf("StripForCache(string) = %v, %v", got, err)
		}
	})
}

func TestKeyNormalize(t *testing.T) {
	cm := Key{}
	cm.GVR.Version, cm.GVR.Resource = "v1", "configmaps"
	tests := []struct {
		name    string
		in      Key
		want    Key
		wantErr bool
	}{
		{name: "plain", in: cm, want: cm},
		{
			name: "label requirements sorted",
			in:   Key{GVR: cm.GVR, LabelSelector: "b=2, a=1"},
			want: Key{GVR: cm.GVR, LabelSelector: "a=1,b=2"},
		},
		{
			name: "field selector kept",
			in:   Key{GVR: cm.GVR, Namespace: "x", FieldSelector: "metadata.name=a"},
			want: Key{GVR: cm.GVR, Namespace: "x", FieldSelector: "metadata.name=a"},
		},
		{name: "no resource", in: Key{GVR: cm.GVR.GroupVersion().WithResource("")}, wantErr: true},
		{name: "no version", in: Key{GVR: cm.GVR.GroupResource().WithVersion("")}, wantErr: true},
		{name: "subresource", in: Key{GVR: cm.GVR.GroupVersion().WithResource("pods/log")}, wantErr: true},
		{name: "bad labels", in: Key{GVR: cm.GVR, LabelSelector: "a in (b"}, wantErr: true},
		{name: "bad fields", in: Key{GVR: cm.GVR, FieldSelector: "a~b"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.normalize()
			if (err != nil) != tt.wantErr {
				t.Fatalf("normalize() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("normalize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKeyString(t *testing.T) {
	k := Key{Namespace: "x", LabelSelector: "a=1", FieldSelector: "metadata.name=n"}
	k.GVR.Group, k.GVR.Version, k.GVR.Resource = "example.com", "v1", "widgets"
	want := `widgets.v1.example.com in namespace "x" labels "a=1" fields "metadata.name=n"`
	if got := k.String(); got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
}
