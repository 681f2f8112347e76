package dynamicinformer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/projection"
)

// BenchmarkWatchDecoding decodes the same watch stream (1,000 MODIFIED
// events of the ConfigMap of BenchmarkCompact, with two managedFields
// entries as server-side apply leaves them) as client-go's dynamic client
// decodes it (the bare controller's informer), and with this package's
// codec, which transcodes each object into the compact form, in turns
// within each iteration.
//
// Metrics: ns/event of client-go's decoding (client-go), of it followed by
// shaping the decoded object for the cache (client-go+shape: what kreact's
// informers did before the codec), of the codec (compact), and the ratio
// compact/client-go.
func BenchmarkWatchDecoding(b *testing.B) {
	u := sampleObject(b, "a")
	u.SetManagedFields(nil)
	obj := u.DeepCopy().Object
	unstructured.SetNestedSlice(obj, []any{
		map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": "2026-11-26T07:00:00Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:seq": map[string]any{}, "f:payload": map[string]any{}}}},
		map[string]any{"manager": "bench", "operation": "Update", "apiVersion": "v1", "time": "2026-11-26T07:00:01Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:tier": map[string]any{}}}}},
	}, "metadata", "managedFields")
	var stream bytes.Buffer
	const events = 1000
	for i := range events {
		unstructured.SetNestedField(obj, fmt.Sprint(1000+i), "metadata", "resourceVersion")
		line, err := json.Marshal(map[string]any{"type": "MODIFIED", "object": obj})
		if err != nil {
			b.Fatal(err)
		}
		stream.Write(line)
		stream.WriteByte('\n')
	}
	clientGo := rest.CopyConfig(dynamic.ConfigFor(&rest.Config{})).NegotiatedSerializer
	decodeAll := func(ns runtime.NegotiatedSerializer, each func(runtime.Object)) time.Duration {
		start := time.Now()
		n := 0
		decodeWatch(b, ns, bytes.NewReader(stream.Bytes()), func(_ watch.EventType, o runtime.Object) {
			each(o)
			n++
		})
		if n != events {
			b.Fatalf("decoded %d events, want %d", n, events)
		}
		return time.Since(start)
	}
	cacheShape := shape(projection.Fields{})
	var plain, shaped, compact time.Duration
	for b.Loop() {
		plain += decodeAll(clientGo, func(runtime.Object) {})
		shaped += decodeAll(clientGo, func(o runtime.Object) { cacheShape(o.(*unstructured.Unstructured)) })
		compact += decodeAll(compactSerializer{}, func(o runtime.Object) {
			if _, ok := o.(*compactObject); !ok {
				b.Fatalf("decoded %T", o)
			}
		})
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*events) }
	b.ReportMetric(per(plain), "ns/event-client-go")
	b.ReportMetric(per(shaped), "ns/event-client-go+shape")
	b.ReportMetric(per(compact), "ns/event-compact")
	b.ReportMetric(float64(compact)/float64(plain), "compact/client-go")
}
