package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The generated CRDs are as large as asked, the same for the same index,
// and structural: the API server accepts them only so.
func TestLargeCRD(t *testing.T) {
	a, b := largeCRD(7, crdSchemaBytes), largeCRD(7, crdSchemaBytes)
	if !reflect.DeepEqual(a.Object, b.Object) {
		t.Fatal("largeCRD(7) differs between two calls")
	}
	if reflect.DeepEqual(a.Object, largeCRD(8, crdSchemaBytes).Object) {
		t.Fatal("largeCRD(7) and largeCRD(8) are the same")
	}
	if got, want := a.GetName(), "widget007s.g007.bench.kreact.dev"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	versions := a.Object["spec"].(map[string]any)["versions"].([]any)
	if len(versions) != 2 {
		t.Fatalf("%d versions, want 2", len(versions))
	}
	storage := 0
	for _, v := range versions {
		v := v.(map[string]any)
		if v["storage"] == true {
			storage++
		}
		schema := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		data, err := json.Marshal(schema)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(data); n < crdSchemaBytes*9/10 || n > crdSchemaBytes*13/10 {
			t.Errorf("version %s: schema of %d bytes, want about %d", v["name"], n, crdSchemaBytes)
		}
		nodes, depth := checkStructural(t, "openAPIV3Schema", schema, 0)
		if nodes < 400 || depth < 4 {
			t.Errorf("version %s: %d schema nodes nested %d deep, want a Cluster API-like tree (400 nodes, 4 deep)", v["name"], nodes, depth)
		}
	}
	if storage != 1 {
		t.Errorf("%d storage versions, want 1", storage)
	}
}

// checkStructural checks what a structural schema needs of each node (a
// type; an object's properties or additionalProperties; an array's items;
// required names that are properties) and returns the nodes and the depth.
func checkStructural(t *testing.T, path string, s map[string]any, depth int) (nodes, maxDepth int) {
	t.Helper()
	nodes, maxDepth = 1, depth
	typ, _ := s["type"].(string)
	switch typ {
	case "object":
		props, _ := s["properties"].(map[string]any)
		if props == nil && s["additionalProperties"] == nil && path != "openAPIV3Schema.metadata" {
			t.Errorf("%s: an object without properties", path)
		}
		for name, p := range props {
			n, d := checkStructural(t, path+"."+name, p.(map[string]any), depth+1)
			nodes += n
			maxDepth = max(maxDepth, d)
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				t.Errorf("%s: required %q is not a property", path, r)
			}
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			t.Errorf("%s: an array without items", path)
			break
		}
		n, d := checkStructural(t, path+"[]", items, depth+1)
		nodes += n
		maxDepth = max(maxDepth, d)
	case "string", "integer", "boolean":
	default:
		t.Errorf("%s: type %q", path, typ)
	}
	return nodes, maxDepth
}

// The report pairs the two processes of a repeat for the ratios, and
// shows what the CRDs add to each from the medians.
func TestCRDReport(t *testing.T) {
	mb := int64(1 << 20)
	var results []crdResult
	for _, n := range []int{0, 200} {
		for rep := range 3 {
			extra := int64(0)
			if n > 0 {
				extra = 10 * mb
			}
			results = append(results,
				crdResult{crds: n, repeat: rep, controller: "kreact", start: time.Duration(1+rep) * time.Second,
					hwmReady: 40*mb + extra, hwm: 40*mb + extra, rss: 30*mb + extra + int64(rep)*mb},
				crdResult{crds: n, repeat: rep, controller: "bare", start: time.Second,
					hwmReady: 20 * mb, hwm: 20 * mb, rss: 20 * mb})
		}
	}
	var b bytes.Buffer
	crdReport(&b, results)
	out := b.String()
	for _, want := range []string{
		"| 0 | 2 | kreact | 2s | 40 MiB | 40 MiB | 31 MiB |",
		"| 0 | kreact, median | 2.00 s | 40 MiB | 40 MiB | 31 MiB | 3 |",
		"| 0 | kreact/bare, median (min–max) | **2.00×** (1.00–3.00) | **2.00×** (2.00–2.00) | **2.00×** (2.00–2.00) | **1.55×** (1.50–1.60) | 3 |",
		"| 200 | kreact/bare, median (min–max) | **2.00×** (1.00–3.00) | **2.50×** (2.50–2.50) | **2.50×** (2.50–2.50) | **2.05×** (2.00–2.10) | 3 |",
		"| kreact | +0.00 s | +10 MiB | +10 MiB | +10 MiB |",
		"| bare | +0.00 s | +0 MiB | +0 MiB | +0 MiB |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n| 200 | "); n != 9 {
		t.Errorf("%d rows for 200 CRDs, want 6 starts, 2 medians and 1 ratio:\n%s", n, out)
	}
}

func TestCRDSettingsLine(t *testing.T) {
	got := crdSettingsLine(200, 3, 30*time.Second, settings{qps: 200, burst: 400}, 2, "go1.26")
	for _, want := range []string{"with 200 (two served versions", fmt.Sprintf("%d KiB", crdSchemaBytes>>10), "3 repeats", "idle RSS 30s after ready", "client QPS 200 burst 400"} {
		if !strings.Contains(got, want) {
			t.Errorf("settings %q lack %q", got, want)
		}
	}
}
