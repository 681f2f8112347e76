package projection

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func obj() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "7",
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"},
			"generation": int64(3), "creationTimestamp": "2026-01-01T00:00:00Z",
			"finalizers": []any{"x"},
		},
		"spec": map[string]any{
			"replicas": int64(2), "paused": false,
			"template": map[string]any{"spec": map[string]any{"containers": []any{"big"}}},
		},
		"status": map[string]any{"conditions": []any{"c"}, "replicas": int64(2)},
	}
}

func TestApplyKeepsIdentityAndThePaths(t *testing.T) {
	in := obj()
	got := New(Path{"spec", "replicas"}, Path{"status", "conditions"}, Path{"metadata", "generation"}).Apply(in)
	want := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "7",
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"},
			"generation": int64(3), "finalizers": []any{"x"},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"conditions": []any{"c"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if !reflect.DeepEqual(in, obj()) {
		t.Errorf("Apply changed its argument: %v", in)
	}
}

func TestApplyIdentityOnlyAndMissingPaths(t *testing.T) {
	got := New(Path{"spec", "nothing", "here"}, Path{"spec", "replicas", "deeper"}).Apply(obj())
	if _, ok := got["spec"]; ok {
		// spec.nothing.here is missing; spec.replicas is a number.
		if len(got["spec"].(map[string]any)) != 0 {
			t.Errorf("spec: %v", got["spec"])
		}
	}
	if md := got["metadata"].(map[string]any); md["name"] != "web" || md["generation"] != nil {
		t.Errorf("metadata: %v", md)
	}
	if New().Apply(nil) != nil {
		t.Error("Apply(nil) is not nil")
	}
}

func TestWholeKeepsTheSameMap(t *testing.T) {
	in := obj()
	if got := (Fields{}).Apply(in); reflect.ValueOf(got).Pointer() != reflect.ValueOf(in).Pointer() {
		t.Error("Whole().Apply copied")
	}
	if !(Fields{}).Whole() || New().Whole() {
		t.Error("Whole")
	}
}

func TestNewIsCanonical(t *testing.T) {
	a := New(Path{"status"}, Path{"spec", "replicas"}, Path{"status", "conditions"}, Path{"metadata", "labels", "x"}, Path{"spec", "replicas"})
	b := New(Path{"spec", "replicas"}, Path{"status"})
	if !a.Equal(b) || a.String() != b.String() {
		t.Errorf("%s != %s", a, b)
	}
	if got := a.String(); got != "spec.replicas,status" {
		t.Errorf("String: %q", got)
	}
	if got := New(Path{"metadata", "annotations", "example.com/x"}, Path{"data", "a.b"}).String(); got != `data["a.b"]` {
		t.Errorf("String: %q", got)
	}
	if (Fields{}).String() != "*" || New().String() != "" {
		t.Error("String of whole or identity only")
	}
}

func TestUnionCoversKeepsReaches(t *testing.T) {
	a := New(Path{"spec", "replicas"})
	b := New(Path{"status"})
	u := a.Union(b)
	if !u.Covers(a) || !u.Covers(b) || a.Covers(b) || !a.Covers(New()) {
		t.Error("Covers")
	}
	if !a.Union(Fields{}).Whole() || !(Fields{}).Covers(u) || u.Covers(Fields{}) {
		t.Error("whole")
	}
	for _, c := range []struct {
		p              Path
		keeps, reaches bool
	}{
		{Path{"spec", "replicas"}, true, true},
		{Path{"spec", "replicas", "x"}, true, true},
		{Path{"spec"}, false, true},
		{Path{"spec", "paused"}, false, false},
		{Path{"metadata", "labels", "app"}, true, true},
		{Path{"metadata"}, false, true},
		{Path{"metadata", "generation"}, false, false},
		{Path{"kind"}, true, true},
	} {
		if a.Keeps(c.p) != c.keeps || a.Reaches(c.p) != c.reaches {
			t.Errorf("%s: Keeps %v Reaches %v, want %v %v", c.p, a.Keeps(c.p), a.Reaches(c.p), c.keeps, c.reaches)
		}
	}
}

func TestMetadataOnly(t *testing.T) {
	if !New().MetadataOnly() || !New(Path{"metadata", "generation"}).MetadataOnly() ||
		New(Path{"spec"}).MetadataOnly() || (Fields{}).MetadataOnly() {
		t.Error("MetadataOnly")
	}
}

// describe prints a Node as nested keys, "*" for a value kept whole.
func describe(n *Node) string {
	if n.Whole {
		return "*"
	}
	keys := make([]string, 0, len(n.Keys))
	for k := range n.Keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + ":" + describe(n.Keys[k]))
	}
	b.WriteByte('}')
	return b.String()
}

func TestKept(t *testing.T) {
	const identity = "metadata:{annotations:* deletionTimestamp:* finalizers:* labels:* name:* namespace:* ownerReferences:* resourceVersion:* uid:*}"
	for _, c := range []struct {
		f    Fields
		want string
	}{
		{New(), "{apiVersion:* kind:* " + identity + "}"},
		{New(Path{"spec", "replicas"}, Path{"status"}), "{apiVersion:* kind:* " + identity + " spec:{replicas:*} status:*}"},
		{New(Path{"metadata", "generation"}), "{apiVersion:* kind:* " + strings.Replace(identity, "finalizers:*", "finalizers:* generation:*", 1) + "}"},
		{New(Path{"metadata"}), "{apiVersion:* kind:* metadata:*}"},
	} {
		if got := describe(c.f.Kept()); got != c.want {
			t.Errorf("%s: Kept() = %s, want %s", c.f, got, c.want)
		}
	}
	if (Fields{}).Kept() != nil {
		t.Error("whole objects have a Kept tree")
	}
}
