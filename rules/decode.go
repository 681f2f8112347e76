package rules

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/yamlnode"
)

// The fields each object of the format knows. They are the single source of
// truth for unknown-field errors, and a test checks them against
// schema/rule.schema.json.
var (
	documentFields   = []string{"apiVersion", "kind", "metadata", "spec"}
	metadataFields   = []string{"name", "description"}
	specFields       = []string{"watch", "events", "ignoreChanges", "reads", "permissions", "http", "script", "scriptFile", "scriptLang", "every", "schedule", "timeZone", "workers", "timeout", "memoryLimit", "retries", "maxActions", "actionWorkers", "delivery", "rateLimit", "burst", "dryRun", "finalizer", "isolate", "tickScope", "recordEvents", "admission", "serviceAccountName"}
	watchFields      = []string{"resource", "namespaces", "labelSelector", "fieldSelector", "fields"}
	permissionFields = []string{"resources", "verbs", "namespaces"}
	admissionFields  = []string{"failurePolicy", "timeout", "mode"}
)

// decoder turns the yaml.Node tree of one document into a Rule, collecting
// every problem instead of stopping at the first. It never fails: a field
// with a problem is left at its zero value or default and the error list
// says why.
type decoder struct {
	yamlnode.Decoder
	lines []string // the file's lines, for block scalar indentation
	// object is set for a rule object (ParseObject), which may not name
	// a script file.
	fromObject bool
	// namespace is a Rule object's namespace: only a Rule, a team's, may
	// name the ServiceAccount it acts as (spec.serviceAccountName).
	namespace string
}

func newDecoder(file string, lines []string, errs *diag.ErrorList) *decoder {
	return &decoder{Decoder: yamlnode.Decoder{File: file, Errs: errs, Hint: fieldHint}, lines: lines}
}

// fieldHint explains an unknown field that is a field of the format
// written at the wrong level.
func fieldHint(path, name string) string {
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

// rule decodes one document. It returns nil when the document is empty, or
// when it is not a rule at all (wrong apiVersion or kind), in which case
// only that is reported, not every field a foreign object has.
func (d *decoder) rule(doc *yaml.Node) *Rule {
	if len(doc.Content) == 0 || yamlnode.IsNull(doc.Content[0]) {
		return nil
	}
	root := yamlnode.Deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		d.Errorf(doc.Content[0], "expected a Rule (a mapping with apiVersion, kind, metadata and spec), got %s", yamlnode.Describe(root))
		return nil
	}
	// apiVersion and kind first: a document that is not a rule gets one
	// error, not one per field of whatever it is.
	if !d.header(root) {
		return nil
	}
	top := d.Mapping(root, "", documentFields)

	r := &Rule{Source: d.File, Pos: d.Pos(root)}
	if meta := top["metadata"]; !meta.Present() {
		d.Errorf(root, "missing required field \"metadata\"")
	} else if m := d.object(meta, "metadata", metadataFields); m != nil {
		d.metadata(r, meta, m)
	}
	if spec := top["spec"]; !spec.Present() {
		d.Errorf(root, "missing required field \"spec\"")
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
		e := yamlnode.Lookup(root, f.name)
		if !e.Present() {
			d.Errorf(root, "missing required field %q (want %s: %s)", f.name, f.name, f.want)
			ok = false
			continue
		}
		s, isStr := d.Str(e.Value, f.name)
		if !isStr {
			ok = false
			continue
		}
		if s != f.want {
			msg := diag.Sprintf("%s: got %q, want %q", f.name, s, f.want)
			if f.name == "kind" {
				msg += "; every YAML document in a rules file must be a Rule"
			}
			d.Errorf(e.Value, "%s", msg)
			ok = false
		}
	}
	return ok
}

func (d *decoder) metadata(r *Rule, meta yamlnode.Entry, m map[string]yamlnode.Entry) {
	if e := m["name"]; !e.Present() {
		d.Errorf(meta.Key, "missing required field \"metadata.name\"")
	} else if name, ok := d.nonEmpty(e.Value, "metadata.name"); ok {
		r.Pos = d.Pos(e.Value)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			d.Errorf(e.Value, "metadata.name: invalid name %q: %s", name, strings.Join(errs, "; "))
		} else {
			r.Name = name
		}
	}
	if e := m["description"]; e.Present() {
		r.Description, _ = d.Str(e.Value, "metadata.description")
	}
}

func (d *decoder) spec(r *Rule, spec yamlnode.Entry, m map[string]yamlnode.Entry) {
	// watch
	if items, ok := d.list(m["watch"], "spec.watch"); !ok {
		if !m["watch"].Present() {
			d.Errorf(spec.Key, "missing required field \"spec.watch\"")
		}
	} else if len(items) == 0 {
		d.Errorf(m["watch"].Value, "spec.watch: must list at least one resource")
	} else {
		for i, it := range items {
			if w, ok := d.watch(it, yamlnode.Index("spec.watch", i)); ok {
				r.Watch = append(r.Watch, w)
			}
		}
	}

	// events
	r.Events = AllEvents()
	if items, ok := d.list(m["events"], "spec.events"); ok {
		r.EventsPos = d.Pos(m["events"].Value)
		if len(items) == 0 {
			d.Errorf(m["events"].Value, "spec.events: must list at least one of add, update, delete (leave it out for all three)")
		}
		var got []event.Type
		bad := false
		for _, it := range d.stringItems(items, "spec.events") {
			if ev := event.Type(it.s); slices.Contains(AllEvents(), ev) {
				got = append(got, ev)
			} else {
				d.Errorf(it.n, "%s: unknown event %q (want add, update or delete)", yamlnode.Index("spec.events", it.i), it.s)
				bad = true
			}
		}
		// With an unknown event, all three: the rule has errors and never
		// runs, and a checker (LoadAll) tells no handler that the
		// misspelt event was meant for that it is never called.
		if len(got) > 0 && !bad {
			r.Events = slices.DeleteFunc(AllEvents(), func(ev event.Type) bool { return !slices.Contains(got, ev) })
		}
	}

	// ignoreChanges
	r.IgnoreChanges, r.IgnoreChangesPos = d.fieldPaths(m["ignoreChanges"], "spec.ignoreChanges")

	// reads
	for _, it := range d.stringList(m["reads"], "spec.reads") {
		r.Reads = append(r.Reads, Ref{Name: it.s, Pos: d.Pos(it.n)})
	}

	// permissions
	items, _ := d.list(m["permissions"], "spec.permissions")
	for i, it := range items {
		if p, ok := d.permission(it, yamlnode.Index("spec.permissions", i)); ok {
			r.Permissions = append(r.Permissions, p)
		}
	}

	// http
	for _, it := range d.stringList(m["http"], "spec.http") {
		if _, err := parseHTTPPrefix(it.s); err != nil {
			d.Errorf(it.n, "%s: invalid URL prefix %q: %v", yamlnode.Index("spec.http", it.i), it.s, err)
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
	r.Isolate = d.boolean(m["isolate"], "spec.isolate", false)
	r.RecordEvents = d.boolean(m["recordEvents"], "spec.recordEvents", false)
	r.TickScope = d.tickScope(r, m["tickScope"])
	d.admission(r, m["admission"])
	d.serviceAccount(r, m["serviceAccountName"])
}

// serviceAccount decodes spec.serviceAccountName, the ServiceAccount of
// its namespace a Rule acts as. An administrator's rule (a rule file, a
// ClusterRule) acts as kreact's own ServiceAccount, so naming one there is
// an error rather than a field silently ignored.
func (d *decoder) serviceAccount(r *Rule, e yamlnode.Entry) {
	if !e.Present() || yamlnode.IsNull(yamlnode.Deref(e.Value)) {
		return
	}
	s, ok := d.Str(e.Value, "spec.serviceAccountName")
	if !ok {
		return
	}
	if d.namespace == "" {
		d.Errorf(e.Value, "spec.serviceAccountName: only a Rule (a team's, in a namespace) acts as a ServiceAccount; a ClusterRule or a rule file acts as kreact's own")
		return
	}
	if msgs := validation.IsDNS1123Subdomain(s); len(msgs) > 0 {
		d.Errorf(e.Value, "spec.serviceAccountName: %q is not a ServiceAccount name: %s", s, strings.Join(msgs, "; "))
		return
	}
	r.ServiceAccountName = s
}

// admission decodes spec.admission; left out, every field has its
// default (the block only matters to a script with admission handlers,
// which the engine checks).
func (d *decoder) admission(r *Rule, e yamlnode.Entry) {
	r.Admission = Admission{FailurePolicy: FailIgnore, Timeout: DefaultAdmissionTimeout, Mode: AdmissionEnforce}
	m := d.object(e, "spec.admission", admissionFields)
	if m == nil {
		return
	}
	a := &r.Admission
	a.Pos = d.Pos(e.Key)
	a.FailurePolicy, _ = decodeEnum(d, m["failurePolicy"], "spec.admission.failurePolicy", "failure policy", FailIgnore, FailIgnore, FailFail)
	a.Mode, _ = decodeEnum(d, m["mode"], "spec.admission.mode", "mode", AdmissionEnforce, AdmissionEnforce, AdmissionAudit)
	a.Timeout = d.duration(m["timeout"], "spec.admission.timeout", DefaultAdmissionTimeout, time.Second, MaxAdmissionTimeout)
	if t := m["timeout"]; t.Present() && a.Timeout%time.Second != 0 {
		// The API server waits whole seconds (timeoutSeconds).
		d.Errorf(t.Value, "spec.admission.timeout: must be whole seconds, got %v", a.Timeout)
		a.Timeout = DefaultAdmissionTimeout
	}
}

// tickScope decodes spec.tickScope; left out, it is "" (TickCluster).
func (d *decoder) tickScope(r *Rule, e yamlnode.Entry) TickScope {
	v, ok := decodeEnum(d, e, "spec.tickScope", "scope", "", TickCluster, TickReplica)
	if ok && !r.Ticks() {
		d.Errorf(e.Value, "spec.tickScope: applies to spec.every or spec.schedule, and neither is set")
	}
	return v
}

// schedule decodes spec.schedule and spec.timeZone, reporting every
// problem of both at once: spec.timeZone's at spec.timeZone.
func (d *decoder) schedule(r *Rule, sched, tz, every yamlnode.Entry) {
	set := func(e yamlnode.Entry) bool { return e.Present() && !yamlnode.IsNull(yamlnode.Deref(e.Value)) }
	if set(tz) {
		if s, ok := d.Str(tz.Value, "spec.timeZone"); ok {
			if !set(sched) {
				d.Errorf(tz.Value, "spec.timeZone: applies to spec.schedule, which is not set")
			}
			if err := checkZone(s); err != nil {
				d.Errorf(tz.Value, "spec.timeZone: %v", err)
			}
			r.TimeZone = s
		}
	}
	if !set(sched) {
		return
	}
	s, ok := d.Str(sched.Value, "spec.schedule")
	if !ok {
		return
	}
	if set(every) {
		d.Errorf(sched.Key, "spec.schedule: spec.every (at %s) and spec.schedule both call onTick; keep one", d.Pos(every.Key).LineCol())
	}
	for _, err := range scheduleErrors(s, set(tz)) {
		d.Errorf(sched.Value, "spec.schedule: %q: %v", s, err)
	}
	// Kept when it has problems: the rule has errors then and never
	// runs, but a checker (LoadAll) still sees that it ticks, and can
	// tell that its script has no onTick.
	r.Schedule = s
}

// delivery decodes spec.delivery; left out, it is DeliverLatest.
func (d *decoder) delivery(e yamlnode.Entry) Delivery {
	v, _ := decodeEnum(d, e, "spec.delivery", "delivery", DeliverLatest, DeliverLatest, DeliverEvery)
	return v
}

// decodeEnum decodes the string field e at path, which takes one of
// values: left out or unknown it is def, an unknown one reported as an
// unknown what. ok says that one of values was written.
func decodeEnum[T ~string](d *decoder, e yamlnode.Entry, path, what string, def T, values ...T) (v T, ok bool) {
	if !e.Present() || yamlnode.IsNull(yamlnode.Deref(e.Value)) {
		return def, false
	}
	s, ok := d.Str(e.Value, path)
	if !ok {
		return def, false
	}
	if slices.Contains(values, T(s)) {
		return T(s), true
	}
	want := make([]string, len(values))
	for i, v := range values {
		want[i] = string(v)
	}
	d.Errorf(e.Value, "%s: unknown %s %q (want %s or %s)", path, what, s, strings.Join(want[:len(want)-1], ", "), want[len(want)-1])
	return def, false
}

// defaultBurst is twice the rate, rounded up, and at least 1.
func defaultBurst(rate float64) int {
	return max(1, int(math.Ceil(2*rate)))
}

func (d *decoder) watch(n *yaml.Node, path string) (Watch, bool) {
	var w Watch
	v := yamlnode.Deref(n)
	if yamlnode.IsNull(v) || v.Kind != yaml.MappingNode {
		d.Errorf(n, "%s: expected a mapping with resource (and optionally namespaces, labelSelector, fieldSelector, fields), got %s", path, yamlnode.Describe(v))
		return w, false
	}
	m := d.Mapping(v, path, watchFields)
	ok := true
	if e := m["resource"]; !e.Present() {
		d.Errorf(n, "missing required field %q", yamlnode.Join(path, "resource"))
		ok = false
	} else {
		w.Pos = d.Pos(e.Value)
		w.Resource, ok = d.nonEmpty(e.Value, yamlnode.Join(path, "resource"))
	}
	if e := m["namespaces"]; e.Present() {
		w.NamespacesPos = d.Pos(e.Value)
		for _, it := range d.stringList(e, yamlnode.Join(path, "namespaces")) {
			if errs := validation.IsDNS1123Label(it.s); len(errs) > 0 {
				d.Errorf(it.n, "%s: invalid namespace %q: %s", yamlnode.Index(yamlnode.Join(path, "namespaces"), it.i), it.s, strings.Join(errs, "; "))
				continue
			}
			w.Namespaces = append(w.Namespaces, it.s)
		}
	}
	if e := m["labelSelector"]; e.Present() {
		if s, isStr := d.Str(e.Value, yamlnode.Join(path, "labelSelector")); isStr {
			if _, err := labels.Parse(s); err != nil {
				d.Errorf(e.Value, "%s: invalid label selector %q: %v", yamlnode.Join(path, "labelSelector"), s, err)
			} else {
				w.LabelSelector, w.LabelSelectorPos = s, d.Pos(e.Value)
			}
		}
	}
	if e := m["fieldSelector"]; e.Present() {
		if s, isStr := d.Str(e.Value, yamlnode.Join(path, "fieldSelector")); isStr {
			if _, err := fields.ParseSelector(s); err != nil {
				d.Errorf(e.Value, "%s: invalid field selector %q: %v", yamlnode.Join(path, "fieldSelector"), s, err)
			} else {
				w.FieldSelector, w.FieldSelectorPos = s, d.Pos(e.Value)
			}
		}
	}
	if e := m["fields"]; e.Present() && !yamlnode.IsNull(yamlnode.Deref(e.Value)) {
		w.FieldsPos = d.Pos(e.Value)
		w.Fields, _ = d.fieldPaths(e, yamlnode.Join(path, "fields"))
		// Set even when an item has a problem: the rule has errors then
		// and never runs, and a checker (LoadAll) still compares the
		// script's reads with what is left.
		w.FieldsSet = true
	}
	return w, ok
}

// fieldPaths decodes a list of field paths (spec.ignoreChanges,
// spec.watch[].fields), each parsed with ParseFieldPath; a path that does
// not parse, or that is another written differently, is reported at its
// item.
func (d *decoder) fieldPaths(e yamlnode.Entry, path string) ([]FieldPath, []diag.Position) {
	var out []FieldPath
	var pos []diag.Position
	samePath := map[string]int{}
	for _, it := range d.stringList(e, path) {
		at := yamlnode.Index(path, it.i)
		p, err := ParseFieldPath(it.s)
		if err != nil {
			d.Errorf(it.n, "%s: invalid path %q: %v", at, it.s, err)
			continue
		}
		if j, dup := samePath[p.key()]; dup {
			d.Errorf(it.n, "%s: %q is the same path as %q", at, it.s, out[j].String())
			continue
		}
		samePath[p.key()] = len(out)
		out = append(out, p)
		pos = append(pos, d.Pos(it.n))
	}
	return out, pos
}

func (d *decoder) permission(n *yaml.Node, path string) (Permission, bool) {
	p := Permission{Pos: d.Pos(n)}
	v := yamlnode.Deref(n)
	if yamlnode.IsNull(v) || v.Kind != yaml.MappingNode {
		d.Errorf(n, "%s: expected a mapping with resources and verbs (and optionally namespaces), got %s", path, yamlnode.Describe(v))
		return p, false
	}
	m := d.Mapping(v, path, permissionFields)
	ok := true
	if e := m["namespaces"]; e.Present() {
		p.namespacesPos = d.Pos(e.Value)
		items := d.stringList(e, yamlnode.Join(path, "namespaces"))
		if l := yamlnode.Deref(e.Value); l != nil && l.Kind == yaml.SequenceNode && len(l.Content) == 0 {
			d.Errorf(e.Value, `%s: must not be empty: leave it out for the namespaces the rule watches, or write ["*"] for all`, yamlnode.Join(path, "namespaces"))
			ok = false
		}
		for _, it := range items {
			if it.s == "*" {
				if len(items) > 1 {
					d.Errorf(it.n, `%s: "*" (all namespaces) must be the only entry`, yamlnode.Index(yamlnode.Join(path, "namespaces"), it.i))
					ok = false
				}
				p.AllNamespaces = true
				continue
			}
			if errs := validation.IsDNS1123Label(it.s); len(errs) > 0 {
				d.Errorf(it.n, "%s: invalid namespace %q: %s", yamlnode.Index(yamlnode.Join(path, "namespaces"), it.i), it.s, strings.Join(errs, "; "))
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
		items, isList := d.list(e, yamlnode.Join(path, f))
		switch {
		case !e.Present():
			d.Errorf(n, "missing required field %q", yamlnode.Join(path, f))
			ok = false
		case isList && len(items) == 0:
			d.Errorf(e.Value, "%s: must not be empty", yamlnode.Join(path, f))
			ok = false
		}
		lists[f] = items
	}
	for _, it := range d.stringItems(lists["resources"], yamlnode.Join(path, "resources")) {
		p.Resources = append(p.Resources, Ref{Name: it.s, Pos: d.Pos(it.n)})
	}
	for _, it := range d.stringItems(lists["verbs"], yamlnode.Join(path, "verbs")) {
		vb := actions.Verb(it.s)
		switch {
		case slices.Contains(PermissionVerbs(), vb):
			p.Verbs = append(p.Verbs, vb)
		case vb == actions.HTTP:
			d.Errorf(it.n, "%s: http is not a permission verb; list URL prefixes in spec.http", yamlnode.Index(yamlnode.Join(path, "verbs"), it.i))
		default:
			d.Errorf(it.n, "%s: unknown verb %q (want create, apply, patch, delete, event or condition)", yamlnode.Index(yamlnode.Join(path, "verbs"), it.i), it.s)
		}
	}
	return p, ok && len(p.Resources) > 0 && len(p.Verbs) > 0
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
