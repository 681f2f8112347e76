package scripting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dop251/goja"

	"github.com/kreact/kreact/internal/testjson"
)

// marshalJSONMatches checks that marshalJSON writes what json.Marshal
// writes, and fails alike.
func marshalJSONMatches(t *testing.T, x any) {
	t.Helper()
	want, wantErr := json.Marshal(x)
	got, _, keys, err := marshalJSON(x, []byte("stale scratch"), nil)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("marshalJSON(%#v) error = %v, json.Marshal's = %v", x, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("marshalJSON(%#v)\n= %s\nwant %s", x, got, want)
	}
	if len(keys) != 0 {
		t.Errorf("marshalJSON(%#v) left %d keys in its scratch space", x, len(keys))
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []any{
		nil, true, false, int64(0), int64(-42), int64(math.MaxInt64), int64(math.MinInt64),
		0.5, -0.25, 1e21, 1e20, 1e-6, 1e-7, 123456789.125, math.Copysign(0, -1), math.NaN(), math.Inf(1),
		"", "plain text 123 ~!@#$%^*()_+-=[]{}|;:',./?`", "quote \" backslash \\ slash /",
		"<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff\x00nul\x1fus\x7fdel",
		"héllo wörld", "日本語", "line\u2028sep\u2029para", "bad \xff utf-8 \xc3", "emoji 😀",
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": int64(1), "a": int64(2), "": "empty", "A": nil, "é": true, "<k>": "v"},
		map[string]any{"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"z": []any{int64(1), "x", nil, map[string]any{"k": 1.5}}, "a": false}}},
		[]any{map[string]any{"op": "replace", "path": "/spec/replicas", "value": int64(0)}, map[string]any{"from": "/a", "op": "copy", "path": "/b"}},
		// Not JSON data, but json.Marshal's answer all the same.
		map[string]any{"n": 7, "m": map[string]string{"b": "1", "a": "2"}, "f": float32(0.1)},
		map[string]any{"bad": func() {}},
		[]any{int64(1), make(chan int)},
	}
	for _, x := range tests {
		marshalJSONMatches(t, x)
	}
}

// TestMarshalJSONRandom compares marshalJSON with json.Marshal on random
// JSON data.
func TestMarshalJSONRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		marshalJSONMatches(t, testjson.Random(rng))
	}
}

// FuzzMarshalJSON compares marshalJSON with json.Marshal on the JSON data
// that decoding the input gives, numbers as toJSON makes them.
func FuzzMarshalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x<y",null,true]}`, `"\u2028\ud800"`, `[1e21,1e-7,-0]`, `{"":{"":{}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var x any
		if json.Unmarshal([]byte(s), &x) != nil {
			return
		}
		marshalJSONMatches(t, integers(x))
	})
}

// integers turns integral float64s into int64s, as toJSON does.
func integers(x any) any {
	switch x := x.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		for k, v := range x {
			x[k] = integers(v)
		}
	case []any:
		for i, v := range x {
			x[i] = integers(v)
		}
	}
	return x
}

// encodeMatches checks that encodeJSON writes what marshalJSON writes of
// toJSON's data, and refuses what toJSON refuses with the same error.
func encodeMatches(t *testing.T, e *env, v goja.Value, what string) {
	t.Helper()
	x, wantErr := e.toJSON(v, "patch")
	got, err := e.encodeJSON(v, "patch")
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: encodeJSON error = %v, toJSON's = %v", what, err, wantErr)
	}
	if wantErr != nil {
		return
	}
	want, _, _, merr := marshalJSON(x, nil, nil)
	if merr != nil {
		t.Fatalf("%s: marshalJSON: %v", what, merr)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: encodeJSON\n= %s\nwant %s", what, got, want)
	}
}

func TestEncodeJSONMatchesToJSON(t *testing.T) {
	e := &env{vm: goja.New()}
	view := e.vm.NewDynamicObject(&objectView{e: e, m: map[string]any{
		"b": json.Number("1.0"), "a": []any{int64(1), 2.5, "x", map[string]any{"z": nil, "<": true}},
	}})
	_ = e.vm.Set("view", view)
	for _, src := range []string{
		`null`, `true`, `0`, `-0`, `42`, `0.1`, `1e21`, `2**53`, `"a<b>&\u2028\"\\"`, `"\ud800"`,
		`({})`, `[]`, `({b: 1, a: [1, "x", null, {d: false, c: 0.5}], "é": {}, "": ""})`,
		`({spec: {replicas: 3}, metadata: {annotations: {"example.com/x": "1"}}})`,
		`({when: new Date(0)})`, `({v: view, w: [view, view]})`, `[, 1]`,
		`({n: NaN})`, `({i: Infinity})`, `({u: undefined})`, `({f() {}})`, `({s: Symbol("s")})`,
		`({b: 1n})`, `({m: new Map()})`, `({d: new Date(NaN)})`, `(() => { const o = {}; o.o = o; return o; })()`,
		`({long: "x".repeat(4 << 20)})`, `Object.defineProperty({a: 1}, "hidden", {value: 2})`,
	} {
		v, err := e.vm.RunString(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		encodeMatches(t, e, v, src)
	}
	// Random JSON data, as plain script values.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		encodeMatches(t, e, e.fromJSON(testjson.Random(rng)), fmt.Sprintf("random value %d", i))
	}
}
