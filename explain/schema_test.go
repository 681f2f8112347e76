package explain

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/delivery"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fullObject is an answer with every field of the schema set.
func fullObject() *Object {
	at := time.Date(2026, 3, 1, 9, 21, 7, 412000000, time.UTC)
	return &Object{
		Resource: "deployments.apps", Namespace: "shop", Name: "web", Exists: true,
		Process: "replica kreact-0_1a2b", Note: "the object is in the shard of replica kreact-1_3c4d",
		Rules: []Rule{{
			Name: "scale", Position: "rules.yaml:4:9", Watched: true,
			Watches: []delivery.WatchMatch{{Entry: 0, Watched: true}, {Entry: 1, Reasons: []string{`namespace "shop" is not in spec.watch[1].namespaces [shops] (rules.yaml:9:19)`}}},
			Traces: []Trace{{
				Informer: 0,
				Records: []Record{
					{At: at, Kind: "change", Event: "update", Result: "queued"},
					{At: at.Add(time.Millisecond), Kind: "call", Event: "update", Result: "failed; retry 1 of 3 to come", Detail: "rules.yaml:20:7: Error: boom", Duration: Duration(445 * time.Microsecond), Retry: 0},
					{At: at.Add(2 * time.Second), Kind: "call", Event: "update", Result: "ok", Duration: Duration(1500 * time.Microsecond), Retry: 1},
					{At: at.Add(2*time.Second + 2*time.Millisecond), Kind: "action", Result: "ok", Duration: Duration(3 * time.Millisecond), Verb: "patch", Target: "deployments.apps shop/web"},
				},
				Pending: []string{"onTimer at 2026-03-01T09:26:07Z (in 5m0s)"},
			}},
			Note: "its script has admission handlers only",
		}},
	}
}

// The JSON and YAML of an answer are a documented schema (docs/cli.md):
// lower-case keys, resources as kubectl names them, durations as Go
// duration strings. The golden files hold every key; a change of the
// schema shows in their diff (go test ./explain -update).
func TestSchema(t *testing.T) {
	o := fullObject()
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := o.Write(&out, format); err != nil {
			t.Fatal(err)
		}
		path := "testdata/object." + format
		if *update {
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("-o %s differs from %s (go test ./explain -update rewrites it):\n%s", format, path, out.String())
		}
		// kreact explain reads the answer a running kreact sends.
		var back Object
		if format == "json" {
			err = json.Unmarshal(out.Bytes(), &back)
		} else {
			err = yaml.Unmarshal(out.Bytes(), &back)
		}
		if err != nil || !reflect.DeepEqual(&back, o) {
			t.Errorf("-o %s does not read back: %v\n%+v", format, err, back)
		}
	}
}

// Every key of the JSON is camelCase (no Go field names), and no value is
// an object the schema does not document.
func TestSchemaKeys(t *testing.T) {
	data, err := json.Marshal(fullObject())
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys = append(keys, prefix+k)
				walk(prefix+k+".", x)
			}
		case []any:
			for _, x := range v {
				walk(strings.TrimSuffix(prefix, ".")+"[].", x)
			}
		}
	}
	walk("", tree)
	want := map[string]bool{}
	for _, k := range []string{
		"resource", "namespace", "name", "exists", "process", "note", "rules",
		"rules[].name", "rules[].position", "rules[].watched", "rules[].note",
		"rules[].watches", "rules[].watches[].entry", "rules[].watches[].watched", "rules[].watches[].reasons",
		"rules[].traces", "rules[].traces[].informer", "rules[].traces[].pending", "rules[].traces[].records",
		"rules[].traces[].records[].at", "rules[].traces[].records[].kind", "rules[].traces[].records[].event",
		"rules[].traces[].records[].result", "rules[].traces[].records[].detail", "rules[].traces[].records[].duration",
		"rules[].traces[].records[].retry", "rules[].traces[].records[].verb", "rules[].traces[].records[].target",
	} {
		want[k] = true
	}
	got := map[string]bool{}
	for _, k := range keys {
		got[k] = true
		if !want[k] {
			t.Errorf("key %s is not in the documented schema", k)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("key %s of the documented schema is missing", k)
		}
	}
	for _, bad := range []string{`"Group"`, `"Resource"`, `"source"`, `"duration":4`} {
		if strings.Contains(string(data), bad) {
			t.Errorf("the JSON has %s:\n%s", bad, data)
		}
	}
}

// A delivery core's trace becomes the schema's: the informer's index,
// times in UTC, durations to the microsecond, kinds and events as words.
func TestTracesConversion(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 21, 7, 412000000, time.FixedZone("CET", 3600))
	got := traces([]delivery.ObjectTrace{{Source: 1, Records: []delivery.Record{
		{At: at, Kind: delivery.RecordCall, Event: "delete", Result: "ok; finalizer removed", Duration: 445305 * time.Nanosecond, Retry: 2},
	}, Pending: []string{"onAdd"}}})
	want := []Trace{{Informer: 1, Records: []Record{
		{At: at.UTC(), Kind: "call", Event: "delete", Result: "ok; finalizer removed", Duration: Duration(445 * time.Microsecond), Retry: 2},
	}, Pending: []string{"onAdd"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("traces = %+v, want %+v", got, want)
	}
	if s := got[0].Records[0].Duration.String(); s != "445µs" {
		t.Errorf("duration %q, want 445µs as the text prints it", s)
	}
}

// The answer about a deleted object says so on each rule's line, rather
// than leaving it without a status.
func TestDeletedObjectText(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 21, 7, 412000000, time.UTC)
	o := &Object{Resource: "configmaps", Namespace: "shop", Name: "web", Rules: []Rule{
		{Name: "held", Position: "rules.yaml:4:9", Traces: []Trace{{Records: []Record{
			{At: at, Kind: "change", Event: "delete", Result: "queued", Detail: "deleted; held by the finalizer kreact.dev/held"},
			{At: at.Add(time.Millisecond), Kind: "call", Event: "delete", Result: "ok; finalizer removed", Duration: Duration(445 * time.Microsecond)},
		}}}},
		{Name: "other", Position: "rules.yaml:20:9"},
	}}
	var b strings.Builder
	o.WriteText(&b)
	want := `configmaps shop/web
  the object does not exist (now); its trace, if any, follows
  rule held (rules.yaml:4:9): deleted
    09:21:07.412 delete: queued: deleted; held by the finalizer kreact.dev/held
    09:21:07.413 onDelete: ok; finalizer removed (445µs)
  rule other (rules.yaml:20:9): deleted
    no record of it lately
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}
