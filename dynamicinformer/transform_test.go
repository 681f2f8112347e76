package dynamicinformer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
			for range 2 { // idempotent, in place
				stripForCache(tt.in)
				if diff := cmp.Diff(tt.want, tt.in); diff != "" {
					t.Fatalf("object (-want +got):\n%s", diff)
				}
			}
		})
	}
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
