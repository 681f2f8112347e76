package dynamicinformer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/internal/testjson"
	"github.com/kreact/kreact/projection"
)

// transcodeMatches checks that transcoding data gives what decoding it
// with the unstructured decoder and shaping it for a cache of whole
// objects gives, and fails alike.
func transcodeMatches(t *testing.T, data string) {
	t.Helper()
	got, err := transcodeObject([]byte(data))
	u := &unstructured.Unstructured{}
	wantErr := u.UnmarshalJSON([]byte(data))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%.200s:\nerror %v, unstructured decoder's %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	want := shape(projection.Fields{})(u).(*compactObject)
	if g, w := got.decode().Object, want.decode().Object; !reflect.DeepEqual(g, w) {
		t.Fatalf("%.200s:\n got %#v\nwant %#v", data, g, w)
	}
	if got.GetNamespace() != want.GetNamespace() || got.GetName() != want.GetName() || got.GetUID() != want.GetUID() || got.GetResourceVersion() != want.GetResourceVersion() {
		t.Fatalf("%.200s: identity %q %q %q %q, want %q %q %q %q", data, got.GetNamespace(), got.GetName(), got.GetUID(), got.GetResourceVersion(),
			want.GetNamespace(), want.GetName(), want.GetUID(), want.GetResourceVersion())
	}
}

func TestTranscodeMatches(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, data := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","uid":"u","resourceVersion":"7",
		"managedFields":[{"manager":"kubectl","fieldsV1":{"f:data":{".":{},"f:x":{}}}}],
		"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"a\":[1,{\"b\":\"}\"}]}","keep":"me"},
		"labels":{"app":"x"}},"data":{"x":"y"}}`,
		// Only the last-applied annotation: annotations go.
		`{"kind":"X","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"x"}}}`,
		// Empty annotations go too, as stripForCache drops them.
		`{"kind":"X","metadata":{"annotations":{}, "name": "n"}}`,
		// Not maps: left alone.
		`{"kind":"X","metadata":{"annotations":null,"managedFields":null}}`,
		`{"kind":"X","metadata":null}`,
		`{"kind":"X","metadata":{"name":5,"uid":null}}`,
		// Numbers as the unstructured decoder converts them.
		`{"kind":"X","n":[0,-0,1,-1,1.0,1e3,1E+3,1e-3,-2.5e-7,9223372036854775807,9223372036854775808,-9223372036854775808,
		-9223372036854775809,12345678901234567890123,0.1,1.7976931348623157e308]}`,
		// Strings: escapes, surrogates, invalid UTF-8, long ones.
		`{"kind":"X","s":["a\"b\\c\/d\b\f\n\r\t","\u00e9\u65e5\ud83d\ude00","\ud800","` + "\xff\xfe" + `","` + long + `","é"],
		"\u006bey":"escaped key"}`,
		// Whitespace everywhere.
		" \n{ \"kind\" : \"X\" , \"a\" : [ 1 , { } , [ ] , true , false , null ] , \"b\" : { \"c\" : \"d\" } } \t\r\n",
		// More than 127 entries: counts over one byte.
		`{"kind":"X","metadata":{"name":"n","labels":{` + manyEntries(300) + `},"uid":"after"},"l":[` + strings.Repeat("1,", 200) + `1]}`,
		// Duplicate keys: the last wins.
		`{"kind":"X","a":1,"a":2}`,
		// Errors.
		`{"apiVersion":"v1"}`,
		`{"kind":""}`,
		`{"kind":"X",}`,
		`{"kind":"X"`,
		`{"kind":"X","a":[1,]}`,
		`{"kind":"X","a":01}`,
		`{"kind":"X","a":+1}`,
		`{"kind":"X","a":1.}`,
		`{"kind":"X","a":.5}`,
		`{"kind":"X","a":1e}`,
		`{"kind":"X","a":1e999}`,
		`{"kind":"X","a":tru}`,
		`{"kind":"X","a":"\x"}`,
		"{\"kind\":\"X\",\"a\":\"\x01\"}",
		`{"kind":"X","a":"unterminated}`,
		`{"kind":"X"} {}`,
		`[]`,
		``,
	} {
		transcodeMatches(t, data)
	}
}

func manyEntries(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":"v%d"`, i, i)
	}
	return b.String()
}

// TestTranscodeRandom compares the transcoder with the unstructured
// decoder on random objects, compact and indented.
func TestTranscodeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		obj := map[string]any{
			"kind": "X", "apiVersion": "v1", "spec": testjson.Random(rng),
			"metadata": map[string]any{
				"name": fmt.Sprint("n", i), "uid": testjson.Random(rng), "labels": testjson.Random(rng),
				"annotations":   map[string]any{LastAppliedAnnotation: "x", "a": testjson.Random(rng)},
				"managedFields": testjson.Random(rng),
			},
		}
		data, err := json.Marshal(obj)
		if err != nil {
			continue // NaN or an infinity
		}
		transcodeMatches(t, string(data))
		indented, _ := json.MarshalIndent(obj, "", "  ")
		transcodeMatches(t, string(indented))
	}
}

// FuzzTranscode compares the transcoder with the unstructured decoder on
// any input that the decoder reads as an object with a kind.
func FuzzTranscode(f *testing.F) {
	f.Add(`{"kind":"X","metadata":{"name":"a","annotations":{"a":"b"}},"n":[1,1.5,"s"]}`)
	f.Fuzz(func(t *testing.T, data string) {
		u := &unstructured.Unstructured{}
		if u.UnmarshalJSON([]byte(data)) != nil {
			// Malformed input: the transcoder may accept what it skips.
			return
		}
		transcodeMatches(t, data)
	})
}
