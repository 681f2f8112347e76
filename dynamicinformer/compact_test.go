package dynamicinformer

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sampleObject is a ConfigMap as hack/bench's sync phase creates them: a
// 1 KiB payload, labels, an annotation, decoded from JSON the way the
// dynamic client decodes it.
func sampleObject(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	raw := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"bench",
	"uid":"6f1c2a9e-0d7b-4a52-9a51-3d0e1c7f8b21","resourceVersion":"123456","creationTimestamp":"2026-11-26T07:00:00Z",
	"labels":{"app":"bench","tier":"sync"},"annotations":{"example.com/seq":"42"}},
	"data":{"seq":"42","payload":"` + strings.Repeat("x", 1024) + `"}}`
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCompactRoundTrip(t *testing.T) {
	objs := []map[string]any{
		sampleObject(t, "a").Object,
		{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "uid": "u", "resourceVersion": "9", "generation": int64(3)},
			"spec": map[string]any{
				"n": int64(-7), "big": int64(math.MaxInt64), "small": int64(math.MinInt64), "f": 1.5, "nan": math.Inf(1),
				"t": true, "f2": false, "nil": nil, "empty": map[string]any{}, "list": []any{int64(1), "a", []any{}, map[string]any{"k": nil}},
				"unicode": "héllo ✓", "": "empty key",
			},
		},
	}
	for _, obj := range objs {
		c := compact(&unstructured.Unstructured{Object: obj})
		if got := c.decode().Object; !reflect.DeepEqual(got, obj) {
			t.Errorf("round trip:\n got %v\nwant %v", got, obj)
		}
		u := &unstructured.Unstructured{Object: obj}
		if c.GetName() != u.GetName() || c.GetNamespace() != u.GetNamespace() || c.GetUID() != u.GetUID() ||
			c.GetResourceVersion() != u.GetResourceVersion() || c.GetGeneration() != u.GetGeneration() ||
			!reflect.DeepEqual(c.GetLabels(), u.GetLabels()) {
			t.Errorf("accessors differ from the object's")
		}
	}
}

// TestCompactConvertsTypedValues: a typed value someone left in an object
// is stored as the JSON data it encodes to.
func TestCompactConvertsTypedValues(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{
		"ints": []int{1, 2}, "int": 3, "strs": map[string]string{"a": "b"}, "num": json.Number("4.5"),
	}}
	got := compact(&unstructured.Unstructured{Object: obj}).decode().Object
	want := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{
		"ints": []any{int64(1), int64(2)}, "int": int64(3), "strs": map[string]any{"a": "b"}, "num": 4.5,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestCompactDecodeRefusesCorruptData(t *testing.T) {
	c := compact(sampleObject(t, "a"))
	for _, cut := range []int{1, 10, len(c.data) / 2, len(c.data) - 1} {
		d := decoder{s: c.data[:cut]}
		d.value()
		if d.err == nil {
			t.Errorf("cut at %d: no error", cut)
		}
	}
	d := decoder{s: "x"}
	if d.value(); d.err == nil {
		t.Error("unknown tag: no error")
	}
}

// TestCompactIsSmaller pins the point of the compact form: the heap that
// a cached object costs (measured, not computed).
func TestCompactIsSmaller(t *testing.T) {
	const n = 2000
	decoded := heapOf(t, n, func(i int) any { return sampleObject(t, "cm-"+strings.Repeat("x", i%7)) })
	compacted := heapOf(t, n, func(i int) any { return compact(sampleObject(t, "cm-"+strings.Repeat("x", i%7))) })
	t.Logf("decoded %d B/obj, compact %d B/obj", decoded, compacted)
	if compacted*3 > decoded*2 {
		t.Errorf("compact %d B/obj is not below 2/3 of decoded %d B/obj", compacted, decoded)
	}
}

func heapOf(t *testing.T, n int, newObj func(int) any) uint64 {
	t.Helper()
	keep := make([]any, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		keep = append(keep, newObj(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return (after.HeapAlloc - before.HeapAlloc) / uint64(n)
}

func BenchmarkCompact(b *testing.B) {
	u := sampleObject(b, "a")
	c := compact(u)
	raw, _ := json.Marshal(u.Object)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			compact(u)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.decode()
		}
	})
	b.Run("json-decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var x unstructured.Unstructured
			_ = x.UnmarshalJSON(raw)
		}
	})
}

// TestCompactObjectHeader: what a cached object costs besides its data is
// one allocation of 48 bytes (the data string and the offsets of its four
// metadata strings), not 80 (five strings), and the metadata read from the
// offsets is the object's.
func TestCompactObjectHeader(t *testing.T) {
	if got := unsafe.Sizeof(compactObject{}); got > 48 {
		t.Errorf("compactObject is %d bytes, want at most 48 (one allocation of the 48-byte size class)", got)
	}
	o := compact(sampleObject(t, "cm-header"))
	if o.GetNamespace() != "bench" || o.GetName() != "cm-header" || o.GetUID() != "6f1c2a9e-0d7b-4a52-9a51-3d0e1c7f8b21" || o.GetResourceVersion() != "123456" {
		t.Errorf("identity %q %q %q %q", o.GetNamespace(), o.GetName(), o.GetUID(), o.GetResourceVersion())
	}
	none := compact(&unstructured.Unstructured{Object: map[string]any{"kind": "X"}})
	if none.GetNamespace() != "" || none.GetName() != "" || none.GetUID() != "" || none.GetResourceVersion() != "" {
		t.Errorf("an object without metadata has identity %q %q %q %q", none.GetNamespace(), none.GetName(), none.GetUID(), none.GetResourceVersion())
	}
}

// TestKnownKeys: each known key's index is its place in knownKeys, fits
// one byte, and the keys are distinct; a key not known, the empty one
// included, round-trips spelled out.
func TestKnownKeys(t *testing.T) {
	if len(knownKeys) > 64 {
		t.Fatalf("%d known keys; at most 64 fit one byte", len(knownKeys))
	}
	for i, k := range knownKeys {
		if got := knownKey(k); got != i {
			t.Errorf("knownKey(%q) = %d, want %d", k, got, i)
		}
	}
	obj := map[string]any{"kind": "X", "metadata": map[string]any{"name": "n", "": "empty", "unknownKey": int64(1)},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"x": "y"}}}
	c := compact(&unstructured.Unstructured{Object: obj})
	if got := c.decode().Object; !reflect.DeepEqual(got, obj) {
		t.Errorf("round trip:\n got %v\nwant %v", got, obj)
	}
	// "kind", "metadata", "name", "spec", "replicas" and "template" are a
	// byte each; "unknownKey" and "x" are spelled out.
	if strings.Contains(c.data, "metadata") || strings.Contains(c.data, "replicas") || !strings.Contains(c.data, "unknownKey") {
		t.Errorf("compact form %q spells out a known key or not an unknown one", c.data)
	}
}
