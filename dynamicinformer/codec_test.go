package dynamicinformer

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kreact/kreact/projection"
)

// TestDecodeList: a list's items are transcoded; a typed list's items,
// which carry no kind, get the list's, as the unstructured decoder gives
// them; the list's resourceVersion and continue token are read.
func TestDecodeList(t *testing.T) {
	data := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"next","remainingItemCount":3},
	"items":[{"metadata":{"name":"a","namespace":"ns","managedFields":[{}]},"data":{"k":"v"}},
	{"kind":"Other","metadata":{"name":"b"}}]}`
	var list compactList
	if _, _, err := (compactCodec{}).Decode([]byte(data), nil, &list); err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "42" || list.Continue != "next" || list.Kind != "ConfigMapList" || len(list.Items) != 2 {
		t.Fatalf("list = %+v", list)
	}
	var want unstructured.UnstructuredList
	if err := want.UnmarshalJSON([]byte(data)); err != nil {
		t.Fatal(err)
	}
	for i, item := range list.Items {
		w := shape(projection.Fields{})(&want.Items[i]).(*compactObject)
		if got := item.decode().Object; !reflect.DeepEqual(got, w.decode().Object) {
			t.Errorf("item %d = %v, want %v", i, got, w.decode().Object)
		}
	}
	if list.Items[0].GetName() != "a" || list.Items[0].GetNamespace() != "ns" {
		t.Errorf("item 0 identity: %q/%q", list.Items[0].GetNamespace(), list.Items[0].GetName())
	}

	// A list of kind List: items without a kind are no error, as for the
	// unstructured decoder.
	if err := decodeList([]byte(`{"kind":"List","apiVersion":"v1","items":[{"metadata":{"name":"x"}}]}`), &list); err != nil || len(list.Items) != 1 {
		t.Errorf("kind List: %v, %+v", err, list)
	}

	for _, bad := range []string{`{"items":[]}`, `{"kind":"L","items":[{"kind":"X"},]}`, `{"kind":"L","items":[{"kind":"X"} {}]}`, `[]`} {
		if err := decodeList([]byte(bad), &list); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// decodeWatch decodes the watch stream r as client-go's Request.Watch
// does, with the stream decoder ns gives for JSON, and calls each for
// every event.
func decodeWatch(tb testing.TB, ns runtime.NegotiatedSerializer, r io.Reader, each func(watch.EventType, runtime.Object)) {
	tb.Helper()
	objDecoder, streamSerializer, framer, err := runtime.NewClientNegotiator(ns, schema.GroupVersion{}).StreamDecoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(r)), streamSerializer), objDecoder)
	for {
		typ, obj, err := d.Decode()
		if err == io.EOF {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		each(typ, obj)
	}
}

// TestDecodeWatchEvents decodes a stream of watch events as client-go's
// watch decoder does with this package's serializer: the events' objects
// compact, an ERROR event's a Status.
func TestDecodeWatchEvents(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"},"data":{"x":"}{\"]"}}}
{"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","resourceVersion":"2"}},"type":"MODIFIED"}

  {"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"3","annotations":{"k8s.io/initial-events-end":"true"}}}}` +
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}}
`
	// One byte at a time: every frame is split across reads.
	for name, r := range map[string]io.Reader{"whole": strings.NewReader(stream), "bytewise": iotest.OneByteReader(strings.NewReader(stream))} {
		t.Run(name, func(t *testing.T) {
			var got []string
			decodeWatch(t, compactSerializer{}, r, func(typ watch.EventType, obj runtime.Object) {
				switch o := obj.(type) {
				case *compactObject:
					got = append(got, string(typ)+" "+o.GetName()+"@"+o.GetResourceVersion())
					if typ == "BOOKMARK" && o.GetAnnotations()["k8s.io/initial-events-end"] != "true" {
						t.Errorf("bookmark annotations: %v", o.GetAnnotations())
					}
				case *metav1.Status:
					got = append(got, string(typ)+" "+string(o.Reason))
				default:
					t.Fatalf("%s: %T", typ, obj)
				}
			})
			want := []string{"ADDED a@1", "MODIFIED b@2", "BOOKMARK @3", "ERROR Expired"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("events %q, want %q", got, want)
			}
		})
	}
}

// TestFrameReader: a frame larger than the caller's buffer comes in
// pieces with io.ErrShortBuffer; a stream that ends inside a frame ends
// with io.ErrUnexpectedEOF, and between frames with io.EOF.
func TestFrameReader(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 100<<10) + `"}`
	f := jsonFramer{}.NewFrameReader(io.NopCloser(strings.NewReader(big + "\n" + `{"b":1}` + "\n" + `{"c":`)))
	var got bytes.Buffer
	p := make([]byte, 1000)
	for {
		n, err := f.Read(p)
		got.Write(p[:n])
		if err == nil {
			break
		}
		if !errors.Is(err, io.ErrShortBuffer) {
			t.Fatal(err)
		}
	}
	if got.String() != big {
		t.Fatalf("first frame: %d bytes, want %d", got.Len(), len(big))
	}
	if n, err := f.Read(p); err != nil || string(p[:n]) != `{"b":1}` {
		t.Fatalf("second frame %q, %v", p[:n], err)
	}
	if _, err := f.Read(p); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut frame: %v, want io.ErrUnexpectedEOF", err)
	}
	f = jsonFramer{}.NewFrameReader(io.NopCloser(strings.NewReader(`{"b":1}` + "\n ")))
	if _, err := f.Read(p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(p); err != io.EOF {
		t.Fatalf("end: %v, want io.EOF", err)
	}
}

// TestCodecDecodesStatus: an error response's body decodes to a Status,
// as client-go's Result.Error asks for it.
func TestCodecDecodesStatus(t *testing.T) {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nope","reason":"Forbidden","code":403}`
	obj, _, err := compactCodec{}.Decode([]byte(body), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := obj.(*metav1.Status); !ok || s.Code != 403 || s.Reason != metav1.StatusReasonForbidden {
		t.Errorf("decoded %#v", obj)
	}
	if _, _, err := (compactCodec{}).Decode([]byte("not json"), nil, nil); err == nil {
		t.Error("text body: no error")
	}
}

// cborGates turns client-go's CBOR feature gates on.
type cborGates struct{ clientfeatures.Gates }

func (g cborGates) Enabled(f clientfeatures.Feature) bool {
	return f == clientfeatures.ClientsAllowCBOR || f == clientfeatures.ClientsPreferCBOR || g.Gates.Enabled(f)
}

// TestRESTClientAsksForJSON: the informers' client asks for JSON only,
// the one format its codec reads, also where client-go's CBOR feature
// gates would have the dynamic client ask for CBOR.
func TestRESTClientAsksForJSON(t *testing.T) {
	old := clientfeatures.FeatureGates()
	clientfeatures.ReplaceFeatureGates(cborGates{old})
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(old) })
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}]}`)
	}))
	defer srv.Close()
	rc, err := RESTClient(&rest.Config{Host: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := restResource{client: rc, gvr: cmGVR, namespace: "ns"}.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if accept != "application/json" {
		t.Errorf("Accept: %q, want application/json", accept)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "a" || list.ResourceVersion != "5" {
		t.Errorf("list = %+v", list)
	}
}
