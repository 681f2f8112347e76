package rules

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/source"
)

// The fields each object of the format knows. They are the single source of
// truth for unknown-field errors, and a test checks them against
// schema/rule.schema.json.
var (
	documentFields   = []string{"apiVersion", "kind", "metadata", "spec"}
	metadataFields   = []string{"name", "description"}
	specFields       = []string{"watch", "events", "ignoreChanges", "reads", "permissions", "http", "script", "scriptFile", "scriptLang", "every", "schedule", "timeZone", "workers", "timeout", "memoryLimit", "retries", "maxActions", "actionWorkers", "delivery", "rateLimit", "burst", "dryRun", "finalizer"}
	watchFields      = []string{"resource", "namespaces", "labelSelector", "fieldSelector"}
	permissionFields = []string{"resources", "verbs", "namespaces"}
)

// decoder turns the yaml.Node tree of one document into a Rule, collecting
// every problem instead of stopping at the first. It never fails: a field
// with a problem is left at its zero value or default and the error list
// says why.
type decoder struct {
	file  string
	lines []string // the file's lines, for block scalar indentation
	errs  *source.ErrorList
}

// entry is one key: value pair of a mapping.
type entry struct {
	key, value *yaml.Node
}

// present reports whether the field was written with a non-null value.
func (e entry) present() bool { return e.key != nil && !isNull(e.value) }

func (d *decoder) pos(n *yaml.Node) source.Position {
	return source.Position{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs.Add(d.pos(n), source.Sprintf(format, args...))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// deref follows aliases to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind != yaml.ScalarNode:
		return "a YAML document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!str":
		return "string " + strconv.Quote(v)
	case "!!int":
		return "integer " + v
	case "!!float":
		return "number " + v
	case "!!bool":
		return "boolean " + v
	}
	return n.ShortTag() + " " + strconv.Quote(v)
}

// mapping returns the entries of the mapping n, reporting duplicate keys,
// and, unless known is nil, keys that are not in known.
func (d *decoder) mapping(n *yaml.Node, path string, known []string) map[string]entry {
	m := make(map[string]entry, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			if k.ShortTag() == "!!merge" {
				d.errorf(k, "%s: merge keys (<<) are not supported", orRoot(path))
			} else {
				d.errorf(k, "%s: keys must be field names, got %s", orRoot(path), describe(k))
			}
			continue
		}
		if prev, dup := m[name]; dup {
			d.errorf(k, "duplicate field %q (first at %s)", join(path, name), d.pos(prev.key).LineCol())
			continue
		}
		if known != nil && !slices.Contains(known, name) {
			d.errorf(k, "unknown field %q%s", join(path, name), suggest(path, name, known))
			continue
		}
		m[name] = entry{key: k, value: v}
	}
	return m
}

func orRoot(path string) string {
	if path == "" {
		return "document"
	}
	return path
}

// suggest returns a " (did you mean ...?)" hint for an unknown field, or "".
func suggest(path, name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
		if dist := editdistance.Distance(strings.ToLower(name), strings.ToLower(k)); dist < bestDist && dist < len(k)/2+1 {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) <= 4 && path != "" {
		return fmt.Sprintf(" (%s has only %s)", path, strings.Join(known, ", "))
	}
	// Fields written at the wrong level.
	switch {
	case path == "" && slices.Contains(metadataFields, name):
		return fmt.Sprintf(" (did you mean \"metadata.%s\"?)", name)
	case path == "" && slices.Contains(specFields, name):
		return fmt.Sprintf(" (did you mean \"spec.%s\"?)", name)
	case path == "spec" && slices.Contains(metadataFields, name):
		return fmt.Sprintf(" (did you mean \"metadata.%s\"?)", name)
	case path == "spec" && slices.Contains(watchFields, name):
		return fmt.Sprintf(" (%s belongs in each entry of spec.watch)", name)
	}
	return ""
}

// lookup returns the first entry of the mapping n with the given key.
func lookup(n *yaml.Node, key string) entry {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return entry{key: k, value: n.Content[i+1]}
		}
	}
	return entry{}
}

// object returns the mapping of field e, or nil (with an error) when it is
// not a mapping. A null or absent field returns nil without an error.
func (d *decoder) object(e entry, path string, known []string) map[string]entry {
	if !e.present() {
		return nil
	}
	n := deref(e.value)
	if n.Kind != yaml.MappingNode {
		d.errorf(e.value, "%s: expected a mapping, got %s", path, describe(n))
		return nil
	}
	return d.mapping(n, path, known)
}

// list returns the items of the list field e; ok is false when the field is
// absent, null or not a list (which is reported).
func (d *decoder) list(e entry, path string) (items []*yaml.Node, ok bool) {
	if !e.present() {
		return nil, false
	}
	n := deref(e.value)
	if n.Kind != yaml.SequenceNode {
		d.errorf(e.value, "%s: expected a list, got %s", path, describe(n))
		return nil, false
	}
	return n.Content, true
}

// str returns the string value of n; ok is false (and an error reported)
// when n is not a string. Numbers and booleans are not strings: YAML users
// quote them ("2024"), as kubectl requires.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	v := deref(n)
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		hint := ""
		if v.Kind == yaml.ScalarNode && v.ShortTag() != "!!null" {
			hint = source.Sprintf(" (quote it: %q)", v.Value)
		}
		d.errorf(n, "%s: expected a string, got %s%s", path, describe(v), hint)
		return "", false
	}
	return v.Value, true
}

// nonEmpty is str that also rejects "" and blank strings.
func (d *decoder) nonEmpty(n *yaml.Node, path string) (string, bool) {
	s, ok := d.str(n, path)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(n, "%s: must not be empty", path)
		return "", false
	}
	return s, ok
}

// item is an accepted element of a list of strings: its value, node and
// index in the list.
type item struct {
	s string
	n *yaml.Node
	i int
}

// stringList decodes a list field of non-empty strings, reporting the
// elements that are not and duplicates.
func (d *decoder) stringList(e entry, path string) []item {
	nodes, _ := d.list(e, path)
	return d.stringItems(nodes, path)
}

func (d *decoder) stringItems(nodes []*yaml.Node, path string) []item {
	var out []item
	// Duplicates are found with a map, not by scanning what came before:
	// a list of 40,000 entries took seconds to check.
	first := make(map[string]int, len(nodes))
	for i, n := range nodes {
		s, ok := d.nonEmpty(n, index(path, i))
		if !ok {
			continue
		}
		if j, dup := first[s]; dup {
			d.errorf(n, "%s: duplicate %q (first at %s)", index(path, i), s, d.pos(out[j].n).LineCol())
			continue
		}
		first[s] = len(out)
		out = append(out, item{s, n, i})
	}
	return out
}

// integer decodes an integer field within [lo, hi]; absent or null keeps
// def.
func (d *decoder) integer(e entry, path string, def, lo, hi int) int {
	if !e.present() {
		return def
	}
	n := deref(e.value)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.errorf(e.value, "%s: expected an integer, got %s", path, describe(n))
		return def
	}
	var v int64
	if err := n.Decode(&v); err != nil || v < int64(lo) || v > int64(hi) {
		d.errorf(e.value, "%s: must be between %d and %d, got %s", path, lo, hi, n.Value)
		return def
	}
	return int(v)
}

// number decodes a number field in (0, hi]; absent or null keeps def.
func (d *decoder) number(e entry, path string, def, hi float64) float64 {
	if !e.present() {
		return def
	}
	n := deref(e.value)
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		d.errorf(e.value, "%s: expected a number, got %s", path, describe(n))
		return def
	}
	var v float64
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || v <= 0 || v > hi {
		d.errorf(e.value, "%s: must be greater than 0 and at most %g, got %s", path, hi, n.Value)
		return def
	}
	return v
}

// boolean decodes a true/false field; absent or null keeps def.
func (d *decoder) boolean(e entry, path string, def bool) bool {
	if !e.present() {
		return def
	}
	n := deref(e.value)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.errorf(e.value, "%s: expected true or false, got %s", path, describe(n))
		return def
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		d.errorf(e.value, "%s: expected true or false, got %s", path, describe(n))
		return def
	}
	return v
}

// duration decodes a Go duration string ("500ms", "2s") in [lo, hi];
// absent or null keeps def.
func (d *decoder) duration(e entry, path string, def, lo, hi time.Duration) time.Duration {
	if !e.present() {
		return def
	}
	n := deref(e.value)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		d.errorf(e.value, "%s: %s has no unit; write a duration such as \"500ms\", \"2s\" or \"1m\"", path, n.Value)
		return def
	}
	s, ok := d.str(e.value, path)
	if !ok {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.errorf(e.value, "%s: %q is not a duration; write a number and a unit such as \"500ms\", \"2s\" or \"1m\"", path, s)
		return def
	}
	if v < lo || v > hi {
		d.errorf(e.value, "%s: must be between %v and %v, got %v", path, lo, hi, v)
		return def
	}
	return v
}

// bytes decodes an amount of memory written as a Kubernetes quantity
// ("64Mi", "1Gi") in [lo, hi]; absent or null keeps def.
func (d *decoder) bytes(e entry, path string, def, lo, hi int64) int64 {
	if !e.present() {
		return def
	}
	n := deref(e.value)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		d.errorf(e.value, "%s: %s has no unit; write an amount such as \"64Mi\" or \"1Gi\"", path, n.Value)
		return def
	}
	s, ok := d.str(e.value, path)
	if !ok {
		return def
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		d.errorf(e.value, "%s: %q is not an amount of memory; write a number and a unit such as \"64Mi\" or \"1Gi\"", path, s)
		return def
	}
	if q.Cmp(*resource.NewQuantity(lo, resource.BinarySI)) < 0 || q.Cmp(*resource.NewQuantity(hi, resource.BinarySI)) > 0 {
		d.errorf(e.value, "%s: must be between %s and %s, got %s", path, scripting.FormatBytes(lo), scripting.FormatBytes(hi), s)
		return def
	}
	return q.Value()
}

// rule decodes one document. It returns nil when the document is empty, or
// when it is not a rule at all (wrong apiVersion or kind), in which case
// only that is reported, not every field a foreign object has.
func (d *decoder) rule(doc *yaml.Node) *Rule {
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		d.errorf(doc.Content[0], "expected a Rule (a mapping with apiVersion, kind, metadata and spec), got %s", describe(root))
		return nil
	}
	// apiVersion and kind first: a document that is not a rule gets one
	// error, not one per field of whatever it is.
	if !d.header(root) {
		return nil
	}
	top := d.mapping(root, "", documentFields)

	r := &Rule{Source: d.file, Pos: d.pos(root)}
	if meta := top["metadata"]; !meta.present() {
		d.errorf(root, "missing required field \"metadata\"")
	} else if m := d.object(meta, "metadata", metadataFields); m != nil {
		d.metadata(r, meta, m)
	}
	if spec := top["spec"]; !spec.present() {
		d.errorf(root, "missing required field \"spec\"")
	} else if m := d.object(spec, "spec", specFields); m != nil {
		d.spec(r, spec, m)
	}
	return r
}

// header checks apiVersion and kind and reports whether the document is a
// rule of this format version.
func (d *decoder) header(root *yaml.Node) bool {
	ok := true
	for _, f := range []struct{ name, want string }{{"apiVersion", APIVersion}, {"kind", Kind}} {
		e := lookup(root, f.name)
		if !e.present() {
			d.errorf(root, "missing required field %q (want %s: %s)", f.name, f.name, f.want)
			ok = false
			continue
		}
		s, isStr := d.str(e.value, f.name)
		if !isStr {
			ok = false
			continue
		}
		if s != f.want {
			msg := source.Sprintf("%s: got %q, want %q", f.name, s, f.want)
			if f.name == "kind" {
				msg += "; every YAML document in a rules file must be a Rule"
			}
			d.errorf(e.value, "%s", msg)
			ok = false
		}
	}
	return ok
}

func (d *decoder) metadata(r *Rule, meta entry, m map[string]entry) {
	if e := m["name"]; !e.present() {
		d.errorf(meta.key, "missing required field \"metadata.name\"")
	} else if name, ok := d.nonEmpty(e.value, "metadata.name"); ok {
		r.Pos = d.pos(e.value)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			d.errorf(e.value, "metadata.name: invalid name %q: %s", name, strings.Join(errs, "; "))
		} else {
			r.Name = name
		}
	}
	if e := m["description"]; e.present() {
		r.Description, _ = d.str(e.value, "metadata.description")
	}
}

func (d *decoder) spec(r *Rule, spec entry, m map[string]entry) {
	// watch
	if items, ok := d.list(m["watch"], "spec.watch"); !ok {
		if !m["watch"].present() {
			d.errorf(spec.key, "missing required field \"spec.watch\"")
		}
	} else if len(items) == 0 {
		d.errorf(m["watch"].value, "spec.watch: must list at least one resource")
	} else {
		for i, it := range items {
			if w, ok := d.watch(it, index("spec.watch", i)); ok {
				r.Watch = append(r.Watch, w)
			}
		}
	}

	// events
	r.Events = AllEvents()
	if items, ok := d.list(m["events"], "spec.events"); ok {
		if len(items) == 0 {
			d.errorf(m["events"].value, "spec.events: must list at least one of add, update, delete (leave it out for all three)")
		}
		var got []Event
		for _, it := range d.stringItems(items, "spec.events") {
			if ev := Event(it.s); slices.Contains(AllEvents(), ev) {
				got = append(got, ev)
			} else {
				d.errorf(it.n, "%s: unknown event %q (want add, update or delete)", index("spec.events", it.i), it.s)
			}
		}
		if len(got) > 0 {
			r.Events = slices.DeleteFunc(AllEvents(), func(ev Event) bool { return !slices.Contains(got, ev) })
		}
	}

	// ignoreChanges
	samePath := map[string]int{}
	for _, it := range d.stringList(m["ignoreChanges"], "spec.ignoreChanges") {
		path := index("spec.ignoreChanges", it.i)
		p, err := ParseFieldPath(it.s)
		if err != nil {
			d.errorf(it.n, "%s: invalid path %q: %v", path, it.s, err)
			continue
		}
		if j, dup := samePath[p.key()]; dup {
			d.errorf(it.n, "%s: %q is the same path as %q", path, it.s, r.IgnoreChanges[j].String())
			continue
		}
		samePath[p.key()] = len(r.IgnoreChanges)
		r.IgnoreChanges = append(r.IgnoreChanges, p)
	}

	// reads
	for _, it := range d.stringList(m["reads"], "spec.reads") {
		r.Reads = append(r.Reads, Ref{Name: it.s, Pos: d.pos(it.n)})
	}

	// permissions
	items, _ := d.list(m["permissions"], "spec.permissions")
	for i, it := range items {
		if p, ok := d.permission(it, index("spec.permissions", i)); ok {
			r.Permissions = append(r.Permissions, p)
		}
	}

	// http
	for _, it := range d.stringList(m["http"], "spec.http") {
		if _, err := parseHTTPPrefix(it.s); err != nil {
			d.errorf(it.n, "%s: invalid URL prefix %q: %v", index("spec.http", it.i), it.s, err)
			continue
		}
		r.HTTP = append(r.HTTP, it.s)
	}

	d.script(r, spec, m["script"], m["scriptFile"])
	d.scriptLang(r, m["scriptLang"])

	r.Every = d.duration(m["every"], "spec.every", 0, MinEvery, MaxEvery)
	d.schedule(r, m["schedule"], m["timeZone"], m["every"])
	r.Workers = d.integer(m["workers"], "spec.workers", DefaultWorkers, 1, MaxWorkers)
	r.Timeout = d.duration(m["timeout"], "spec.timeout", DefaultTimeout, MinTimeout, MaxTimeout)
	r.MemoryLimit = d.bytes(m["memoryLimit"], "spec.memoryLimit", DefaultMemoryLimit, MinMemoryLimit, MaxMemoryLimit)
	r.Retries = d.integer(m["retries"], "spec.retries", DefaultRetries, 0, MaxRetries)
	r.MaxActions = d.integer(m["maxActions"], "spec.maxActions", DefaultMaxActions, 1, MaxMaxActions)
	r.ActionWorkers = d.integer(m["actionWorkers"], "spec.actionWorkers", DefaultActionWorkers, 1, MaxActionWorkers)
	r.Delivery = d.delivery(m["delivery"])
	r.RateLimit = d.number(m["rateLimit"], "spec.rateLimit", DefaultRateLimit, MaxRateLimit)
	r.Burst = d.integer(m["burst"], "spec.burst", defaultBurst(r.RateLimit), 1, MaxBurst)
	r.DryRun = d.boolean(m["dryRun"], "spec.dryRun", false)
	r.Finalizer = d.boolean(m["finalizer"], "spec.finalizer", false)
}

// schedule decodes spec.schedule and spec.timeZone.
func (d *decoder) schedule(r *Rule, sched, tz, every entry) {
	if tz.present() && !isNull(deref(tz.value)) {
		if s, ok := d.str(tz.value, "spec.timeZone"); ok {
			r.TimeZone = s
			if !sched.present() || isNull(deref(sched.value)) {
				d.errorf(tz.value, "spec.timeZone: applies to spec.schedule, which is not set")
			}
		}
	}
	if !sched.present() || isNull(deref(sched.value)) {
		return
	}
	s, ok := d.str(sched.value, "spec.schedule")
	if !ok {
		return
	}
	if every.present() && !isNull(deref(every.value)) {
		d.errorf(sched.key, "spec.schedule: spec.every (at %s) and spec.schedule both call onTick; keep one", d.pos(every.key).LineCol())
		return
	}
	if _, err := ParseSchedule(s, r.TimeZone); err != nil {
		at := sched.value
		if strings.Contains(err.Error(), "time zone") && tz.present() && !strings.Contains(err.Error(), "CRON_TZ=") {
			at = tz.value
		}
		d.errorf(at, "spec.schedule: %q: %v (want cron syntax such as \"0 3 * * *\" or \"@daily\")", s, err)
		return
	}
	r.Schedule = s
}

// delivery decodes spec.delivery; left out, it is DeliverLatest.
func (d *decoder) delivery(e entry) Delivery {
	if !e.present() || isNull(deref(e.value)) {
		return DeliverLatest
	}
	s, ok := d.str(e.value, "spec.delivery")
	if !ok {
		return DeliverLatest
	}
	switch v := Delivery(s); v {
	case DeliverLatest, DeliverEvery:
		return v
	}
	d.errorf(e.value, "spec.delivery: unknown delivery %q (want latest or every)", s)
	return DeliverLatest
}

// defaultBurst is twice the rate, rounded up, and at least 1.
func defaultBurst(rate float64) int {
	return max(1, int(math.Ceil(2*rate)))
}

func (d *decoder) watch(n *yaml.Node, path string) (Watch, bool) {
	var w Watch
	v := deref(n)
	if isNull(v) || v.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping with resource (and optionally namespaces, labelSelector, fieldSelector), got %s", path, describe(v))
		return w, false
	}
	m := d.mapping(v, path, watchFields)
	ok := true
	if e := m["resource"]; !e.present() {
		d.errorf(n, "missing required field %q", join(path, "resource"))
		ok = false
	} else {
		w.Pos = d.pos(e.value)
		w.Resource, ok = d.nonEmpty(e.value, join(path, "resource"))
	}
	if e := m["namespaces"]; e.present() {
		w.namespacesPos = d.pos(e.value)
		for _, it := range d.stringList(e, join(path, "namespaces")) {
			if errs := validation.IsDNS1123Label(it.s); len(errs) > 0 {
				d.errorf(it.n, "%s: invalid namespace %q: %s", index(join(path, "namespaces"), it.i), it.s, strings.Join(errs, "; "))
				continue
			}
			w.Namespaces = append(w.Namespaces, it.s)
		}
	}
	if e := m["labelSelector"]; e.present() {
		if s, isStr := d.str(e.value, join(path, "labelSelector")); isStr {
			if _, err := labels.Parse(s); err != nil {
				d.errorf(e.value, "%s: invalid label selector %q: %v", join(path, "labelSelector"), s, err)
			} else {
				w.LabelSelector = s
			}
		}
	}
	if e := m["fieldSelector"]; e.present() {
		if s, isStr := d.str(e.value, join(path, "fieldSelector")); isStr {
			if _, err := fields.ParseSelector(s); err != nil {
				d.errorf(e.value, "%s: invalid field selector %q: %v", join(path, "fieldSelector"), s, err)
			} else {
				w.FieldSelector = s
			}
		}
	}
	return w, ok
}

func (d *decoder) permission(n *yaml.Node, path string) (Permission, bool) {
	p := Permission{Pos: d.pos(n)}
	v := deref(n)
	if isNull(v) || v.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping with resources and verbs (and optionally namespaces), got %s", path, describe(v))
		return p, false
	}
	m := d.mapping(v, path, permissionFields)
	ok := true
	if e := m["namespaces"]; e.present() {
		p.namespacesPos = d.pos(e.value)
		items := d.stringList(e, join(path, "namespaces"))
		if l := deref(e.value); l != nil && l.Kind == yaml.SequenceNode && len(l.Content) == 0 {
			d.errorf(e.value, `%s: must not be empty: leave it out for the namespaces the rule watches, or write ["*"] for all`, join(path, "namespaces"))
			ok = false
		}
		for _, it := range items {
			if it.s == "*" {
				if len(items) > 1 {
					d.errorf(it.n, `%s: "*" (all namespaces) must be the only entry`, index(join(path, "namespaces"), it.i))
					ok = false
				}
				p.AllNamespaces = true
				continue
			}
			if errs := validation.IsDNS1123Label(it.s); len(errs) > 0 {
				d.errorf(it.n, "%s: invalid namespace %q: %s", index(join(path, "namespaces"), it.i), it.s, strings.Join(errs, "; "))
				ok = false
				continue
			}
			// stringList has dropped the duplicates.
			p.Namespaces = append(p.Namespaces, it.s)
		}
		slices.Sort(p.Namespaces)
		if p.AllNamespaces {
			p.Namespaces = nil
		}
	}
	lists := make(map[string][]*yaml.Node, 2)
	for _, f := range []string{"resources", "verbs"} {
		e := m[f]
		items, isList := d.list(e, join(path, f))
		switch {
		case !e.present():
			d.errorf(n, "missing required field %q", join(path, f))
			ok = false
		case isList && len(items) == 0:
			d.errorf(e.value, "%s: must not be empty", join(path, f))
			ok = false
		}
		lists[f] = items
	}
	for _, it := range d.stringItems(lists["resources"], join(path, "resources")) {
		p.Resources = append(p.Resources, Ref{Name: it.s, Pos: d.pos(it.n)})
	}
	for _, it := range d.stringItems(lists["verbs"], join(path, "verbs")) {
		vb := actions.Verb(it.s)
		switch {
		case slices.Contains(PermissionVerbs(), vb):
			p.Verbs = append(p.Verbs, vb)
		case vb == actions.HTTP:
			d.errorf(it.n, "%s: http is not a permission verb; list URL prefixes in spec.http", index(join(path, "verbs"), it.i))
		default:
			d.errorf(it.n, "%s: unknown verb %q (want create, apply, patch, delete or event)", index(join(path, "verbs"), it.i), it.s)
		}
	}
	return p, ok && len(p.Resources) > 0 && len(p.Verbs) > 0
}

// script fills Script, ScriptFile and ScriptPos from exactly one of
// spec.script and spec.scriptFile.
func (d *decoder) script(r *Rule, spec, inline, file entry) {
	switch {
	case inline.present() && file.present():
		d.errorf(file.key, "spec.scriptFile: script (at %s) and scriptFile are mutually exclusive; keep one", d.pos(inline.key).LineCol())
		return
	case !inline.present() && !file.present():
		d.errorf(spec.key, "missing required field \"spec.script\" or \"spec.scriptFile\"")
		return
	case inline.present():
		s, ok := d.str(inline.value, "spec.script")
		if !ok {
			return
		}
		if strings.TrimSpace(s) == "" {
			d.errorf(inline.value, "spec.script: the script is empty")
			return
		}
		r.Script = s
		r.ScriptPos = d.inlineScriptPos(deref(inline.value))
	default:
		name, ok := d.nonEmpty(file.value, "spec.scriptFile")
		if !ok {
			return
		}
		data, path, err := readScriptFile(d.file, name)
		if err != nil {
			d.errorf(file.value, "spec.scriptFile: %v", err)
			return
		}
		if strings.TrimSpace(data) == "" {
			d.errorf(file.value, "spec.scriptFile: script file %s is empty", path)
			return
		}
		r.Script = data
		r.ScriptFile = name
		r.ScriptPos = source.Position{File: path, Line: 1, Col: 1}
	}
}

// scriptLang decodes spec.scriptLang. Left out, a scriptFile ending in .ts
// is TypeScript and anything else JavaScript.
func (d *decoder) scriptLang(r *Rule, e entry) {
	r.ScriptLang = ScriptJavaScript
	if strings.HasSuffix(r.ScriptFile, ".ts") {
		r.ScriptLang = ScriptTypeScript
	}
	if !e.present() || isNull(deref(e.value)) {
		return
	}
	s, ok := d.str(e.value, "spec.scriptLang")
	if !ok {
		return
	}
	switch l := ScriptLang(s); l {
	case ScriptJavaScript, ScriptTypeScript:
		r.ScriptLang = l
	default:
		d.errorf(e.value, "spec.scriptLang: unknown language %q (want js or ts)", s)
	}
}

// inlineScriptPos returns where the first character of the script value n
// is in the YAML file.
func (d *decoder) inlineScriptPos(n *yaml.Node) source.Position {
	p := d.pos(n)
	switch n.Style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		p.Col++
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// n is at the | or > header; the content starts on the next line,
		// indented by the indentation of its first non-blank line, or by
		// the explicit indentation indicator (|2) plus that of the header's
		// line.
		p.Line++
		header := d.line(n.Line)
		if n.Column-1 < len(header) {
			header = header[n.Column-1:]
		}
		if i := strings.IndexAny(header, "123456789"); i >= 0 && i < 3 {
			p.Col = leadingSpaces(d.line(n.Line)) + int(header[i]-'0') + 1
			break
		}
		p.Col = 1
		for l := p.Line; l <= len(d.lines); l++ {
			if s := d.line(l); strings.TrimSpace(s) != "" {
				p.Col = leadingSpaces(s) + 1
				break
			}
		}
	}
	return p
}

func (d *decoder) line(n int) string {
	if n < 1 || n > len(d.lines) {
		return ""
	}
	return d.lines[n-1]
}

func leadingSpaces(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

// parseHTTPPrefix checks an entry of spec.http: an absolute http or https
// URL with a host and no credentials, query or fragment.
func parseHTTPPrefix(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("want an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("missing host")
	case u.User != nil:
		return nil, errors.New("credentials do not belong in the URL")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errors.New("a prefix has no query or fragment")
	case hasDotSegment(u.Path):
		return nil, errors.New("path has . or .. segments")
	}
	return u, nil
}

func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
