package rules

import (
	"reflect"
	"testing"
)

func TestParseFieldPath(t *testing.T) {
	tests := []struct {
		in      string
		want    FieldPath
		str     string
		wantErr string
	}{
		{in: "status", want: FieldPath{"status"}, str: "status"},
		{in: ".status", want: FieldPath{"status"}, str: "status"},
		{in: "metadata.labels", want: FieldPath{"metadata", "labels"}, str: "metadata.labels"},
		{in: `metadata.annotations["example.com/x"]`, want: FieldPath{"metadata", "annotations", "example.com/x"},
			str: `metadata.annotations["example.com/x"]`},
		{in: `metadata.annotations['example.com/x']`, want: FieldPath{"metadata", "annotations", "example.com/x"},
			str: `metadata.annotations["example.com/x"]`},
		{in: `["weird key"].x`, want: FieldPath{"weird key", "x"}, str: `["weird key"].x`},
		{in: `a["q\"uote"]`, want: FieldPath{"a", `q"uote`}, str: `a["q\"uote"]`},
		{in: "spec.template_1.x-y", want: FieldPath{"spec", "template_1", "x-y"}, str: "spec.template_1.x-y"},
		{in: "", wantErr: "empty path"},
		{in: "a.", wantErr: "path ends with '.'"},
		{in: "a..b", wantErr: `unexpected '.'; quote keys that are not plain names: ["my.key"]`},
		{in: "a/b", wantErr: `unexpected '/' after "a"; want '.' or '['`},
		{in: `a.["b"]`, wantErr: `unexpected '[' after '.'; write a["b"], not a.["b"]`},
		{in: "a[0]", wantErr: "list indexes and wildcards are not supported; write the path of the whole list"},
		{in: "a[*]", wantErr: "list indexes and wildcards are not supported; write the path of the whole list"},
		{in: `a["b"`, wantErr: `unterminated ["..."]`},
		{in: `a[""]`, wantErr: `empty key in [""]`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFieldPath(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if got.String() != tt.str {
				t.Errorf("String() = %s, want %s", got, tt.str)
			}
			if again, err := ParseFieldPath(got.String()); err != nil || !again.Equal(got) {
				t.Errorf("String() does not parse back: %q, %v", again, err)
			}
		})
	}
}

func TestIgnoredPaths(t *testing.T) {
	r := &Rule{IgnoreChanges: []FieldPath{{"status"}, {"metadata", "managedFields"}}}
	got := r.IgnoredPaths()
	want := []FieldPath{{"metadata", "resourceVersion"}, {"metadata", "managedFields"}, {"status"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IgnoredPaths() = %v, want %v", got, want)
	}
}
