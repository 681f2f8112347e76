package ruletest

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/yamlnode"
	"github.com/kreact/kreact/rules"
)

// The decoding of spec.fixtures and spec.cases: objects, events and
// expectations, each problem at the position of the value it is about.

func (d *decoder) time(n *yaml.Node, path string) time.Time {
	n = yamlnode.Deref(n)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
		d.Errorf(n, "%s: expected an RFC 3339 time such as 2026-01-01T00:00:00Z, got %s", path, yamlnode.Describe(n))
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, n.Value)
	if err != nil {
		d.Errorf(n, "%s: %q is not an RFC 3339 time such as 2026-01-01T00:00:00Z", path, n.Value)
		return time.Time{}
	}
	return t
}

// fixture reads one entry of a fixtures list: an object, or {file: PATH}
// naming a YAML file of objects (several documents, or a List).
func (d *decoder) fixture(f *File, dir string, n *yaml.Node, path string) []Object {
	n = yamlnode.Deref(n)
	if n.Kind == yaml.MappingNode && len(n.Content) >= 2 && n.Content[0].Value == "file" {
		fs := d.fields(n, path, "file")
		file, ok := d.Str(fs["file"], path+".file")
		if !ok {
			return nil
		}
		full := filepath.Join(dir, file)
		data, err := rules.ReadFile(full)
		if err != nil {
			d.Errorf(fs["file"], "%s.file: %s does not exist or cannot be read", path, full)
			return nil
		}
		fd := newDecoder(full, d.Errs)
		var out []Object
		for _, doc := range documents(full, data, d.Errs) {
			out = append(out, fd.objects(f, doc, "")...)
		}
		return out
	}
	return d.objects(f, n, path)
}

// objects reads an object, or the items of a List.
func (d *decoder) objects(f *File, n *yaml.Node, path string) []Object {
	if m := yamlnode.Deref(n); m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "kind" && m.Content[i+1].Value == "List" {
				var out []Object
				for j := 0; j+1 < len(m.Content); j += 2 {
					if m.Content[j].Value == "items" {
						for k, item := range d.list(m.Content[j+1], yamlnode.Join(path, "items")) {
							if o, ok := d.object(f, item, yamlnode.Index(yamlnode.Join(path, "items"), k)); ok {
								out = append(out, o)
							}
						}
					}
				}
				return out
			}
		}
	}
	if o, ok := d.object(f, n, path); ok {
		return []Object{o}
	}
	return nil
}

// object reads a Kubernetes object: apiVersion, kind and metadata.name are
// required and must name a known resource.
func (d *decoder) object(f *File, n *yaml.Node, path string) (Object, bool) {
	what := path
	if what == "" {
		what = "object"
	}
	v, ok := d.Value(n, what)
	if !ok {
		return Object{}, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(n, "%s: expected an object with apiVersion, kind and metadata, got %s", what, yamlnode.Describe(n))
		return Object{}, false
	}
	u := &unstructured.Unstructured{Object: m}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	switch {
	case apiVersion == "" || kind == "":
		d.Errorf(n, "%s: apiVersion and kind are required", what)
		return Object{}, false
	case name == "":
		d.Errorf(n, "%s: metadata.name is required", what)
		return Object{}, false
	}
	res, err := f.mapper.ResolveKind(apiVersion, kind)
	if err != nil {
		d.Errorf(n, "%s: %v%s", what, err, crdHint)
		return Object{}, false
	}
	ns, _ := md["namespace"].(string)
	switch {
	case res.Namespaced && ns == "":
		u.SetNamespace("default")
	case !res.Namespaced && ns != "":
		d.Errorf(n, "%s: %s is cluster-scoped; remove metadata.namespace", what, kind)
		return Object{}, false
	}
	return Object{Pos: d.Pos(n), Object: u, Resource: res}, true
}

const crdHint = " (custom resources need their CRD in spec.crds)"

// ref reads the object of a delete: an object, or {resource, namespace,
// name}.
func (d *decoder) ref(f *File, n *yaml.Node, path string) (Object, bool) {
	m := yamlnode.Deref(n)
	if m.Kind != yaml.MappingNode || !slices.ContainsFunc(keys(m), func(k string) bool { return k == "resource" }) {
		return d.object(f, n, path)
	}
	fs := d.fields(m, path, "resource", "namespace", "name")
	ref, ok1 := d.Str(fs["resource"], path+".resource")
	name, ok2 := d.Str(fs["name"], path+".name")
	var ns string
	if v := fs["namespace"]; v != nil {
		ns, _ = d.Str(v, path+".namespace")
	}
	if !ok1 || !ok2 {
		return Object{}, false
	}
	res, err := f.mapper.Resolve(ref)
	if err != nil {
		d.Errorf(fs["resource"], "%s.resource: %v%s", path, err, crdHint)
		return Object{}, false
	}
	switch {
	case res.Namespaced && ns == "":
		ns = "default"
	case !res.Namespaced:
		ns = ""
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(res.GVR.GroupVersion().String())
	u.SetKind(res.Kind)
	u.SetName(name)
	u.SetNamespace(ns)
	return Object{Pos: d.Pos(n), Object: u, Resource: res}, true
}

func keys(m *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

func (d *decoder) testCase(f *File, dir string, n *yaml.Node, path string) *Case {
	fs := d.fields(n, path, "name", "description", "now", "replica", "fixtures", "events", "expect")
	if fs == nil {
		return nil
	}
	c := &Case{Pos: d.Pos(n), node: yamlnode.Deref(n), Replica: testReplica}
	if v := fs["name"]; v == nil {
		d.Errorf(n, "%s.name: required", path)
	} else if s, ok := d.Str(v, path+".name"); ok {
		if strings.TrimSpace(s) == "" {
			d.Errorf(v, "%s.name: must not be empty", path)
		}
		c.Name = s
	}
	if v := fs["description"]; v != nil {
		d.Str(v, path+".description")
	}
	if v := fs["now"]; !yamlnode.IsNull(v) {
		c.Now = d.time(v, path+".now")
	}
	if v := fs["replica"]; !yamlnode.IsNull(v) {
		if rf := d.fields(v, path+".replica", "name", "leader"); rf != nil {
			if x, ok := rf["name"]; ok {
				c.Replica.Name, _ = d.Str(x, path+".replica.name")
			}
			if x, ok := rf["leader"]; ok {
				c.Replica.Leader = d.boolean(x, path+".replica.leader")
			}
		}
	}
	for i, item := range d.list(fs["fixtures"], path+".fixtures") {
		c.Fixtures = append(c.Fixtures, d.fixture(f, dir, item, yamlnode.Index(path+".fixtures", i))...)
	}
	events := d.list(fs["events"], path+".events")
	if len(events) == 0 {
		where := fs["events"]
		if where == nil {
			where = n
		}
		d.Errorf(where, "%s.events: list at least one event (add, update, delete, tick or advance)", path)
	}
	for i, item := range events {
		if ev, ok := d.event(f, item, yamlnode.Index(path+".events", i)); ok {
			c.Events = append(c.Events, ev)
		}
	}
	if v := fs["expect"]; !yamlnode.IsNull(v) {
		c.Expect = d.expect(f, v, path+".expect")
	}
	return c
}

func (d *decoder) event(f *File, n *yaml.Node, path string) (Event, bool) {
	fs := d.fields(n, path, "add", "update", "delete", "tick", "advance", "admit", "initial", "queued")
	if fs == nil {
		return Event{}, false
	}
	ev := Event{Pos: d.Pos(n)}
	var set []string
	for _, t := range []event.Type{event.Add, event.Update, event.Delete, event.Tick, Advance, Admit} {
		if _, ok := fs[string(t)]; ok {
			set = append(set, string(t))
			ev.Type = t
		}
	}
	if len(set) != 1 {
		// An unknown key (remove:) has been reported already.
		if len(set) > 1 || len(fs) == len(yamlnode.Deref(n).Content)/2 {
			d.Errorf(n, "%s: give exactly one of add, update, delete, tick, advance and admit, not %d", path, len(set))
		}
		return Event{}, false
	}
	if v, ok := fs["initial"]; ok {
		if ev.Type != event.Add {
			d.Errorf(v, "%s.initial: only an add can be part of an initial list", path)
		}
		ev.Initial = d.boolean(v, path+".initial")
	}
	if v, ok := fs["queued"]; ok {
		ev.Queued = d.boolean(v, path+".queued")
		switch ev.Type {
		case Advance:
			d.Errorf(v, "%s.queued: time passing is not a change that can wait; the rules catch up before the clock moves", path)
		case Admit:
			d.Errorf(v, "%s.queued: the API server waits for the answer to an admission request; it cannot be queued", path)
		}
	}
	v := fs[string(ev.Type)]
	sub := path + "." + string(ev.Type)
	var ok bool
	switch ev.Type {
	case event.Add, event.Update:
		ev.Object, ok = d.object(f, v, sub)
	case event.Delete:
		ev.Object, ok = d.ref(f, v, sub)
	case event.Tick:
		ev.Rule, ok = d.Str(v, sub)
		if ok && f.rules != nil {
			ok = d.checkTick(f, v, sub, ev.Rule)
		}
	case Advance:
		ev.Duration, ok = d.advance(v, sub)
	case Admit:
		ev.Admission, ok = d.admit(f, v, sub)
	}
	return ev, ok
}

// operations are those of an admit event; CONNECT reaches no rule.
var operations = []string{"CREATE", "UPDATE", "DELETE"}

// admit reads the request of an admit event.
func (d *decoder) admit(f *File, n *yaml.Node, path string) (*AdmissionEvent, bool) {
	fs := d.fields(n, path, "operation", "object", "oldObject", "userInfo", "dryRun")
	if fs == nil {
		return nil, false
	}
	a := &AdmissionEvent{Operation: "CREATE"}
	ok := true
	if v, present := fs["operation"]; present {
		s, good := d.Str(v, path+".operation")
		switch {
		case !good:
			ok = false
		case !slices.Contains(operations, s):
			d.Errorf(v, "%s.operation: want CREATE, UPDATE or DELETE, not %q", path, s)
			ok = false
		default:
			a.Operation = s
		}
	}
	v, present := fs["object"]
	switch {
	case !present:
		d.Errorf(n, "%s.object: required", path)
		ok = false
	case a.Operation == "DELETE":
		var good bool
		a.Object, good = d.ref(f, v, path+".object")
		ok = ok && good
	default:
		var good bool
		a.Object, good = d.object(f, v, path+".object")
		ok = ok && good
	}
	if v, present := fs["oldObject"]; present {
		if a.Operation == "CREATE" {
			d.Errorf(v, "%s.oldObject: a CREATE has no old object", path)
			ok = false
		} else if old, good := d.object(f, v, path+".oldObject"); good {
			a.OldObject = &old
		} else {
			ok = false
		}
	}
	if v, present := fs["userInfo"]; present {
		val, good := d.Value(v, path+".userInfo")
		m, isMap := val.(map[string]any)
		if good && !isMap {
			d.Errorf(v, "%s.userInfo: expected a mapping such as {username: alice, groups: [dev]}, got %s", path, yamlnode.Describe(v))
		}
		ok = ok && good && isMap
		a.UserInfo = m
	}
	if v, present := fs["dryRun"]; present {
		a.DryRun = d.boolean(v, path+".dryRun")
	}
	return a, ok
}

// advance reads the duration of an advance event: positive, in Go syntax
// ("90s", "10m", "1h30m").
func (d *decoder) advance(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.Str(n, path)
	if !ok {
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.Errorf(n, "%s: %q is not a duration such as 90s, 10m or 1h30m", path, s)
		return 0, false
	case dur <= 0:
		d.Errorf(n, "%s: the clock only moves forward; want a positive duration, not %s", path, s)
		return 0, false
	}
	return dur, true
}

// checkTick checks that rule exists and would be ticked by kreact run.
func (d *decoder) checkTick(f *File, n *yaml.Node, path, rule string) bool {
	i := slices.IndexFunc(f.rules, func(r *rules.Resolved) bool { return r.Rule.Name == rule })
	if i < 0 {
		d.Errorf(n, "%s: no rule %q under test%s", path, rule, yamlnode.Suggest(rule, f.Rules()))
		return false
	}
	switch {
	case !f.rules[i].Rule.Ticks():
		d.Errorf(n, "%s: rule %q has no spec.every or spec.schedule, so kreact never calls its onTick", path, rule)
		return false
	case !f.programs[i].HasHandler(event.Tick):
		d.Errorf(n, "%s: rule %q declares no onTick(ctx)", path, rule)
		return false
	}
	return true
}

func (d *decoder) expect(f *File, n *yaml.Node, path string) Expect {
	fs := d.fields(n, path, "actions", "partial", "ignoreOtherActions", "errors", "logs", "logsContain", "admission")
	var e Expect
	if v, ok := fs["partial"]; ok {
		e.Partial = d.boolean(v, path+".partial")
	}
	if v, ok := fs["ignoreOtherActions"]; ok {
		e.IgnoreOtherActions = d.boolean(v, path+".ignoreOtherActions")
	}
	for i, item := range d.list(fs["actions"], path+".actions") {
		if a, ok := d.expectedAction(f, item, yamlnode.Index(path+".actions", i)); ok {
			if !a.partialSet {
				a.Partial = e.Partial
			}
			e.Actions = append(e.Actions, a)
		}
	}
	if v, present := fs["admission"]; present {
		e.Admission = []ExpectedAction{}
		for i, item := range d.list(v, path+".admission") {
			if a, ok := d.expectedAnswer(f, item, yamlnode.Index(path+".admission", i)); ok {
				e.Admission = append(e.Admission, a)
			}
		}
	}
	e.Errors, _ = d.strings(fs["errors"], path+".errors")
	e.Logs, _ = d.strings(fs["logs"], path+".logs")
	e.LogsContain, _ = d.strings(fs["logsContain"], path+".logsContain")
	return e
}

// Field names of an action, in the order they are printed.
var actionFields = []string{"rule", "verb", "resource", "subresource", "namespace", "name", "patchType", "patch", "object", "event", "condition", "http", "dryRun"}

// alwaysCompared are compared even when the expectation leaves them out.
var alwaysCompared = []string{"verb", "resource", "name"}

var (
	eventFields     = []string{"type", "reason", "message"}
	conditionFields = []string{"type", "status", "reason", "message", "observedGeneration"}
	httpFields      = []string{"method", "url", "headers", "body"}
	verbs           = []actions.Verb{actions.Create, actions.Apply, actions.Patch, actions.Delete, actions.Event, actions.HTTP, actions.SetCondition}
)

// Field names of an admission answer, in the order they are printed;
// answerCompared are compared even when the expectation leaves them out.
var (
	answerFields   = []string{"rule", "handler", "allowed", "message", "patch", "warnings"}
	answerCompared = []string{"rule", "handler", "allowed"}
)

// expectedAnswer reads an entry of expect.admission.
func (d *decoder) expectedAnswer(f *File, n *yaml.Node, path string) (ExpectedAction, bool) {
	fs := d.fields(n, path, answerFields...)
	if fs == nil {
		return ExpectedAction{}, false
	}
	ok := true
	var out Fields
	for _, key := range answerFields {
		v, present := fs[key]
		if !present {
			if slices.Contains(answerCompared, key) {
				d.Errorf(n, "%s.%s: required", path, key)
				ok = false
			}
			continue
		}
		switch key {
		case "rule", "message":
			s, good := d.Str(v, path+"."+key)
			if key == "rule" && good && f.rules != nil && !slices.Contains(f.Rules(), s) {
				d.Errorf(v, "%s.rule: no rule %q under test%s", path, s, yamlnode.Suggest(s, f.Rules()))
				good = false
			}
			ok = ok && good
			out = append(out, Field{key, s})
		case "handler":
			s, good := d.Str(v, path+"."+key)
			if good && s != "validate" && s != "mutate" {
				d.Errorf(v, "%s.handler: want validate (onValidate) or mutate (onMutate), not %q", path, s)
				good = false
			}
			ok = ok && good
			out = append(out, Field{key, s})
		case "allowed":
			out = append(out, Field{key, d.boolean(v, path+".allowed")})
		case "patch":
			val, good := d.Value(v, path+".patch")
			ok = ok && good
			out = append(out, Field{key, normalize(val)})
		case "warnings":
			list, _ := d.strings(v, path+".warnings")
			if list == nil {
				list = []string{}
			}
			out = append(out, Field{key, normalize(list)})
		}
	}
	if !ok {
		return ExpectedAction{}, false
	}
	return ExpectedAction{Pos: d.Pos(n), Fields: out}, true
}

func (d *decoder) expectedAction(f *File, n *yaml.Node, path string) (ExpectedAction, bool) {
	fs := d.fields(n, path, append(slices.Clone(actionFields), "partial")...)
	if fs == nil {
		return ExpectedAction{}, false
	}
	partial, partialSet := false, false
	if v, ok := fs["partial"]; ok {
		partial, partialSet = d.boolean(v, path+".partial"), true
	}
	ok := true
	str := func(key string) (string, bool) {
		s, good := d.Str(fs[key], path+"."+key)
		ok = ok && good
		return s, good
	}
	var out Fields
	for _, key := range actionFields {
		v, present := fs[key]
		if !present {
			continue
		}
		switch key {
		case "verb":
			s, good := str(key)
			if good && !slices.Contains(verbs, actions.Verb(s)) {
				d.Errorf(v, "%s.verb: %q is not an action verb (want create, apply, patch, delete, event, http or condition)", path, s)
				ok = false
			}
			out = append(out, Field{key, s})
		case "resource":
			s, good := str(key)
			if good {
				res, err := f.mapper.Resolve(s)
				if err != nil {
					d.Errorf(v, "%s.resource: %v%s", path, err, crdHint)
					ok = false
				} else {
					s = res.GVR.GroupResource().String()
				}
			}
			out = append(out, Field{key, s})
		case "rule", "namespace", "name", "subresource":
			s, _ := str(key)
			out = append(out, Field{key, s})
		case "patchType":
			s, good := str(key)
			if good && s != "merge" && s != "json" {
				d.Errorf(v, "%s.patchType: want merge or json, not %q", path, s)
				ok = false
			}
			out = append(out, Field{key, s})
		case "dryRun":
			out = append(out, Field{key, d.boolean(v, path+".dryRun")})
		case "patch", "object":
			val, good := d.Value(v, path+"."+key)
			ok = ok && good
			out = append(out, Field{key, normalize(val)})
		case "event", "condition", "http":
			known := map[string][]string{"event": eventFields, "condition": conditionFields, "http": httpFields}[key]
			sub := d.fields(v, path+"."+key, known...)
			if sub == nil {
				ok = false
				continue
			}
			var inner Fields
			for _, k := range known {
				sv, present := sub[k]
				if !present {
					continue
				}
				if k == "body" || k == "headers" || k == "observedGeneration" {
					val, good := d.Value(sv, path+"."+key+"."+k)
					ok = ok && good
					inner = append(inner, Field{k, normalize(val)})
					continue
				}
				s, good := d.Str(sv, path+"."+key+"."+k)
				ok = ok && good
				inner = append(inner, Field{k, s})
			}
			out = append(out, Field{key, inner})
		}
	}
	if _, present := fs["verb"]; !present {
		d.Errorf(n, "%s.verb: required", path)
		ok = false
	}
	if !ok {
		return ExpectedAction{}, false
	}
	return ExpectedAction{Pos: d.Pos(n), Fields: out, Partial: partial, partialSet: partialSet}, true
}
