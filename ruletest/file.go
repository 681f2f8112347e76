package ruletest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/source"
)

// APIVersion and Kind identify a test document.
const (
	APIVersion = "kreact.dev/v1alpha1"
	Kind       = "RuleTest"
)

// DefaultNow is the scripts' clock in a test that does not set spec.now.
var DefaultNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// File is a loaded test file: its rules resolved against the offline
// resource table and compiled, its fixtures and cases checked. It is not
// changed by Run and may be run any number of times, from one goroutine at
// a time.
type File struct {
	// Path is the file as it was named to LoadFile.
	Path string
	// Name and Description are metadata.name and metadata.description,
	// both optional.
	Name, Description string
	// Now is spec.now, or DefaultNow.
	Now time.Time
	// Fixtures are the objects in the cache at the start of every case.
	Fixtures []Object
	// Cases are spec.cases, in order.
	Cases []*Case

	rules    []*rules.Resolved
	programs []*scripting.Program
	mapper   *restmapper.Mapper

	doc *yaml.Node // the whole document, for Update
}

// Rules returns the names of the rules under test, in load order.
func (f *File) Rules() []string {
	names := make([]string, len(f.rules))
	for i, r := range f.rules {
		names[i] = r.Rule.Name
	}
	return names
}

// Object is an object of a fixture or an event, with the resource it
// belongs to.
type Object struct {
	// Pos is where the object is written.
	Pos source.Position
	// Object is the object as written, with metadata.namespace set to
	// "default" for namespaced objects that name none.
	Object *unstructured.Unstructured
	// Resource is what apiVersion and kind resolve to.
	Resource apiresource.Resource
}

// Case is one entry of spec.cases.
type Case struct {
	// Name is unique within the file.
	Name string
	// Pos is where the case starts.
	Pos source.Position
	// Now, if not zero, replaces the file's clock for this case.
	Now time.Time
	// Fixtures are added to the file's fixtures (replacing any with the
	// same resource, namespace and name) before the events.
	Fixtures []Object
	// Events are what happens, in order.
	Events []Event
	// Expect is what should come of it.
	Expect Expect

	node *yaml.Node // the case's mapping, for Update
}

// EventType is what an event of a case does.
type EventType string

// The event types of spec.cases[].events.
const (
	// Add puts a new object into the cache and delivers it as an add.
	Add EventType = "add"
	// Update replaces an object of the cache; the old version is the
	// cache's.
	Update EventType = "update"
	// Delete removes an object from the cache and delivers its last
	// version.
	Delete EventType = "delete"
	// Tick calls a rule's onTick(ctx), as spec.every does.
	Tick EventType = "tick"
	// Advance moves the clock forward; the timers (kreact.after) and
	// scheduled ticks that fall due on the way are fired in order, each
	// at its own time.
	Advance EventType = "advance"
)

// Event is one entry of a case's events.
type Event struct {
	Type EventType
	// Pos is where the event is written.
	Pos source.Position
	// Object is the object added, updated or deleted. For a delete by
	// reference ({resource, namespace, name}) only Resource, namespace and
	// name are set.
	Object Object
	// Initial marks an add as part of a watch's initial list.
	Initial bool
	// Queued leaves the change waiting when the next event happens, as
	// under load: the rules catch up after the next event that is not
	// queued (or at the end of the case), with the changes coalesced as
	// kreact run coalesces them.
	Queued bool
	// Rule is the rule whose onTick a Tick calls.
	Rule string
	// Duration is how far an Advance moves the clock.
	Duration time.Duration
}

// Expect is a case's expectation.
type Expect struct {
	// Actions are the actions the rules must ask for, in order. An empty
	// list (or none) expects no action.
	Actions []ExpectedAction
	// Errors are substrings of the script errors that must occur, one per
	// error, in order. None means no script error may occur.
	Errors []string
	// Logs are substrings that must occur, in order, among the log
	// records of the scripts; other records may come between them.
	Logs []string
}

// ExpectedAction is one expected action: the fields the test lists, in
// canonical order. verb, resource and name are always compared (absent
// means empty); every other field only when listed.
type ExpectedAction struct {
	Pos    source.Position
	Fields Fields
}

// LoadFile reads and checks the test file at path: its rules, CRDs,
// fixtures and cases. Paths in the file are relative to its directory.
//
// The error, if any, is a source.ErrorList of every problem found, as
// file:line:col messages sorted by position; the File is then nil.
func LoadFile(path string) (*File, error) {
	data, err := rules.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, source.ErrorList{{Pos: source.Position{File: path}, Msg: err.Error()}}
	}
	return Parse(path, data)
}

// Parse is LoadFile for a file already read; path names it in messages and
// is the base of its relative paths.
func Parse(path string, data []byte) (*File, error) {
	var errs source.ErrorList
	f := load(path, data, &errs)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return f, nil
}

func load(path string, data []byte, errs *source.ErrorList) *File {
	d := &decoder{file: path, errs: errs}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			errs.Add(source.Position{File: path}, "empty file: want a RuleTest document")
		} else {
			pos, msg := syntaxPos(path, err)
			errs.Add(pos, msg)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		errs.Add(d.pos(&extra), "a test file holds one RuleTest document; put this one in a file of its own")
	} else if err != io.EOF {
		pos, msg := syntaxPos(path, err)
		errs.Add(pos, msg)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		errs.Add(source.Position{File: path}, "empty document: want a RuleTest")
		return nil
	}
	root := doc.Content[0]
	top := d.fields(root, "", "apiVersion", "kind", "metadata", "spec")
	if top == nil {
		return nil
	}
	f := &File{Path: path, Now: DefaultNow, doc: &doc}
	if n := top["apiVersion"]; n == nil {
		d.errorf(root, "apiVersion: required; want %q", APIVersion)
	} else if s, ok := d.str(n, "apiVersion"); ok && s != APIVersion {
		d.errorf(n, "apiVersion: want %q, not %q", APIVersion, s)
	}
	if n := top["kind"]; n == nil {
		d.errorf(root, "kind: required; want %q", Kind)
	} else if s, ok := d.str(n, "kind"); ok && s != Kind {
		d.errorf(n, "kind: want %q, not %q", Kind, s)
	}
	if n := top["metadata"]; !isNull(n) {
		md := d.fields(n, "metadata", "name", "description")
		if v := md["name"]; v != nil {
			f.Name, _ = d.str(v, "metadata.name")
		}
		if v := md["description"]; v != nil {
			f.Description, _ = d.str(v, "metadata.description")
		}
	}
	specNode := top["spec"]
	if isNull(specNode) {
		d.errorf(root, "spec: required")
		return f
	}
	spec := d.fields(specNode, "spec", "rules", "crds", "now", "fixtures", "cases")
	if spec == nil {
		return f
	}
	dir := filepath.Dir(path)

	// Resources: the offline table and the CRDs the test names.
	resources := restmapper.Builtin()
	crdFiles, crdNodes := d.strings(spec["crds"], "spec.crds")
	for i, file := range crdFiles {
		rs := loadCRDs(filepath.Join(dir, file), d.pos(crdNodes[i]), errs)
		resources = append(resources, rs...)
	}
	f.mapper = restmapper.New(restmapper.NewStatic(resources), restmapper.Options{})

	// Rules.
	ruleFiles, ruleNodes := d.strings(spec["rules"], "spec.rules")
	switch n := spec["rules"]; {
	case isNull(n):
		d.errorf(specNode, "spec.rules: required; list the rule files or directories to test")
	case deref(n).Kind == yaml.SequenceNode && len(deref(n).Content) == 0:
		d.errorf(n, "spec.rules: list at least one rule file or directory")
	}
	if len(ruleFiles) > 0 {
		paths := make([]string, len(ruleFiles))
		for i, file := range ruleFiles {
			paths[i] = filepath.Join(dir, file)
			if _, err := os.Stat(paths[i]); err != nil {
				d.errorf(ruleNodes[i], "spec.rules[%d]: %s does not exist", i, paths[i])
				paths[i] = ""
			}
		}
		paths = slices.DeleteFunc(paths, func(p string) bool { return p == "" })
		if len(paths) > 0 {
			f.loadRules(paths, errs)
		}
	}

	if n := spec["now"]; !isNull(n) {
		f.Now = d.time(n, "spec.now")
	}
	for i, item := range d.list(spec["fixtures"], "spec.fixtures") {
		f.Fixtures = append(f.Fixtures, d.fixture(f, dir, item, index("spec.fixtures", i))...)
	}

	cases := d.list(spec["cases"], "spec.cases")
	if len(cases) == 0 {
		n := spec["cases"]
		if n == nil {
			n = specNode
		}
		d.errorf(n, "spec.cases: list at least one case")
	}
	seen := map[string]source.Position{}
	for i, item := range cases {
		c := d.testCase(f, dir, item, index("spec.cases", i))
		if c == nil {
			continue
		}
		if prev, dup := seen[c.Name]; dup && c.Name != "" {
			errs.Addf(c.Pos, "spec.cases[%d]: duplicate case name %q (also at %s)", i, c.Name, prev)
		}
		seen[c.Name] = c.Pos
		f.Cases = append(f.Cases, c)
	}
	return f
}

// loadRules loads, resolves and compiles the rules under test.
func (f *File) loadRules(paths []string, errs *source.ErrorList) {
	rs, err := rules.Load(paths...)
	if err != nil {
		errs.AddError(source.Position{}, err)
		return
	}
	if len(rs) == 0 {
		errs.Addf(source.Position{File: f.Path}, "spec.rules: %s hold no rules", strings.Join(paths, ", "))
	}
	for _, r := range rs {
		prog, err := engine.Compile(r)
		if err != nil {
			errs.AddError(source.Position{}, err)
			continue
		}
		res, err := r.Resolve(f.mapper)
		if err != nil {
			errs.AddError(source.Position{}, err)
			continue
		}
		f.rules = append(f.rules, res)
		f.programs = append(f.programs, prog)
	}
}

// loadCRDs reads the CustomResourceDefinitions in file and returns the
// resources they define; ref is the spec.crds entry that names it.
func loadCRDs(file string, ref source.Position, errs *source.ErrorList) []apiresource.Resource {
	data, err := rules.ReadFile(file)
	if err != nil {
		errs.Addf(ref, "spec.crds: %s does not exist or cannot be read", file)
		return nil
	}
	out, crdErrs := restmapper.ResourcesFromCRDFile(file, data)
	*errs = append(*errs, crdErrs...)
	return out
}

// documents returns the non-empty documents of a multi-document YAML file.
func documents(file string, data []byte, errs *source.ErrorList) []*yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out
		}
		if err != nil {
			pos, msg := syntaxPos(file, err)
			errs.Add(pos, msg)
			return out
		}
		if len(doc.Content) > 0 && !isNull(doc.Content[0]) {
			out = append(out, doc.Content[0])
		}
	}
}

func (d *decoder) time(n *yaml.Node, path string) time.Time {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
		d.errorf(n, "%s: want an RFC 3339 time such as 2026-01-01T00:00:00Z, not %s", path, describe(n))
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, n.Value)
	if err != nil {
		d.errorf(n, "%s: %q is not an RFC 3339 time such as 2026-01-01T00:00:00Z", path, n.Value)
		return time.Time{}
	}
	return t
}

// fixture reads one entry of a fixtures list: an object, or {file: PATH}
// naming a YAML file of objects (several documents, or a List).
func (d *decoder) fixture(f *File, dir string, n *yaml.Node, path string) []Object {
	n = deref(n)
	if n.Kind == yaml.MappingNode && len(n.Content) >= 2 && n.Content[0].Value == "file" {
		fs := d.fields(n, path, "file")
		file, ok := d.str(fs["file"], path+".file")
		if !ok {
			return nil
		}
		full := filepath.Join(dir, file)
		data, err := rules.ReadFile(full)
		if err != nil {
			d.errorf(fs["file"], "%s.file: %s does not exist or cannot be read", path, full)
			return nil
		}
		fd := &decoder{file: full, errs: d.errs}
		var out []Object
		for _, doc := range documents(full, data, d.errs) {
			out = append(out, fd.objects(f, doc, "")...)
		}
		return out
	}
	return d.objects(f, n, path)
}

// objects reads an object, or the items of a List.
func (d *decoder) objects(f *File, n *yaml.Node, path string) []Object {
	if m := deref(n); m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "kind" && m.Content[i+1].Value == "List" {
				var out []Object
				for j := 0; j+1 < len(m.Content); j += 2 {
					if m.Content[j].Value == "items" {
						for k, item := range d.list(m.Content[j+1], join(path, "items")) {
							if o, ok := d.object(f, item, index(join(path, "items"), k)); ok {
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
	v, ok := d.value(n, what)
	if !ok {
		return Object{}, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(n, "%s: want an object with apiVersion, kind and metadata, not %s", what, describe(n))
		return Object{}, false
	}
	u := &unstructured.Unstructured{Object: m}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	switch {
	case apiVersion == "" || kind == "":
		d.errorf(n, "%s: apiVersion and kind are required", what)
		return Object{}, false
	case name == "":
		d.errorf(n, "%s: metadata.name is required", what)
		return Object{}, false
	}
	res, err := f.mapper.ResolveKind(apiVersion, kind)
	if err != nil {
		d.errorf(n, "%s: %v%s", what, err, crdHint)
		return Object{}, false
	}
	ns, _ := md["namespace"].(string)
	switch {
	case res.Namespaced && ns == "":
		u.SetNamespace("default")
	case !res.Namespaced && ns != "":
		d.errorf(n, "%s: %s is cluster-scoped; remove metadata.namespace", what, kind)
		return Object{}, false
	}
	return Object{Pos: d.pos(n), Object: u, Resource: res}, true
}

const crdHint = " (custom resources need their CRD in spec.crds)"

// ref reads the object of a delete: an object, or {resource, namespace,
// name}.
func (d *decoder) ref(f *File, n *yaml.Node, path string) (Object, bool) {
	m := deref(n)
	if m.Kind != yaml.MappingNode || !slices.ContainsFunc(keys(m), func(k string) bool { return k == "resource" }) {
		return d.object(f, n, path)
	}
	fs := d.fields(m, path, "resource", "namespace", "name")
	ref, ok1 := d.str(fs["resource"], path+".resource")
	name, ok2 := d.str(fs["name"], path+".name")
	var ns string
	if v := fs["namespace"]; v != nil {
		ns, _ = d.str(v, path+".namespace")
	}
	if !ok1 || !ok2 {
		return Object{}, false
	}
	res, err := f.mapper.Resolve(ref)
	if err != nil {
		d.errorf(fs["resource"], "%s.resource: %v%s", path, err, crdHint)
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
	return Object{Pos: d.pos(n), Object: u, Resource: res}, true
}

func keys(m *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

func (d *decoder) testCase(f *File, dir string, n *yaml.Node, path string) *Case {
	fs := d.fields(n, path, "name", "description", "now", "fixtures", "events", "expect")
	if fs == nil {
		return nil
	}
	c := &Case{Pos: d.pos(n), node: deref(n)}
	if v := fs["name"]; v == nil {
		d.errorf(n, "%s.name: required", path)
	} else if s, ok := d.str(v, path+".name"); ok {
		if strings.TrimSpace(s) == "" {
			d.errorf(v, "%s.name: must not be empty", path)
		}
		c.Name = s
	}
	if v := fs["description"]; v != nil {
		d.str(v, path+".description")
	}
	if v := fs["now"]; !isNull(v) {
		c.Now = d.time(v, path+".now")
	}
	for i, item := range d.list(fs["fixtures"], path+".fixtures") {
		c.Fixtures = append(c.Fixtures, d.fixture(f, dir, item, index(path+".fixtures", i))...)
	}
	events := d.list(fs["events"], path+".events")
	if len(events) == 0 {
		where := fs["events"]
		if where == nil {
			where = n
		}
		d.errorf(where, "%s.events: list at least one event (add, update, delete, tick or advance)", path)
	}
	for i, item := range events {
		if ev, ok := d.event(f, item, index(path+".events", i)); ok {
			c.Events = append(c.Events, ev)
		}
	}
	if v := fs["expect"]; !isNull(v) {
		c.Expect = d.expect(f, v, path+".expect")
	}
	return c
}

func (d *decoder) event(f *File, n *yaml.Node, path string) (Event, bool) {
	fs := d.fields(n, path, "add", "update", "delete", "tick", "advance", "initial", "queued")
	if fs == nil {
		return Event{}, false
	}
	ev := Event{Pos: d.pos(n)}
	var set []string
	for _, t := range []EventType{Add, Update, Delete, Tick, Advance} {
		if _, ok := fs[string(t)]; ok {
			set = append(set, string(t))
			ev.Type = t
		}
	}
	if len(set) != 1 {
		// An unknown key (remove:) has been reported already.
		if len(set) > 1 || len(fs) == len(deref(n).Content)/2 {
			d.errorf(n, "%s: give exactly one of add, update, delete, tick and advance, not %d", path, len(set))
		}
		return Event{}, false
	}
	if v, ok := fs["initial"]; ok {
		if ev.Type != Add {
			d.errorf(v, "%s.initial: only an add can be part of an initial list", path)
		}
		ev.Initial = d.boolean(v, path+".initial")
	}
	if v, ok := fs["queued"]; ok {
		ev.Queued = d.boolean(v, path+".queued")
		if ev.Type == Advance {
			d.errorf(v, "%s.queued: time passing is not a change that can wait; the rules catch up before the clock moves", path)
		}
	}
	v := fs[string(ev.Type)]
	sub := path + "." + string(ev.Type)
	var ok bool
	switch ev.Type {
	case Add, Update:
		ev.Object, ok = d.object(f, v, sub)
	case Delete:
		ev.Object, ok = d.ref(f, v, sub)
	case Tick:
		ev.Rule, ok = d.str(v, sub)
		if ok && f.rules != nil {
			ok = d.checkTick(f, v, sub, ev.Rule)
		}
	case Advance:
		ev.Duration, ok = d.advance(v, sub)
	}
	return ev, ok
}

// advance reads the duration of an advance event: positive, in Go syntax
// ("90s", "10m", "1h30m").
func (d *decoder) advance(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.errorf(n, "%s: %q is not a duration such as 90s, 10m or 1h30m", path, s)
		return 0, false
	case dur <= 0:
		d.errorf(n, "%s: the clock only moves forward; want a positive duration, not %s", path, s)
		return 0, false
	}
	return dur, true
}

// checkTick checks that rule exists and would be ticked by kreact run.
func (d *decoder) checkTick(f *File, n *yaml.Node, path, rule string) bool {
	i := slices.IndexFunc(f.rules, func(r *rules.Resolved) bool { return r.Rule.Name == rule })
	if i < 0 {
		d.errorf(n, "%s: no rule %q under test%s", path, rule, suggest(rule, f.Rules()))
		return false
	}
	switch {
	case !f.rules[i].Rule.Ticks():
		d.errorf(n, "%s: rule %q has no spec.every or spec.schedule, so kreact never calls its onTick", path, rule)
		return false
	case !f.programs[i].HasHandler(scripting.Tick):
		d.errorf(n, "%s: rule %q declares no onTick(ctx)", path, rule)
		return false
	}
	return true
}

func (d *decoder) expect(f *File, n *yaml.Node, path string) Expect {
	fs := d.fields(n, path, "actions", "errors", "logs")
	var e Expect
	for i, item := range d.list(fs["actions"], path+".actions") {
		if a, ok := d.expectedAction(f, item, index(path+".actions", i)); ok {
			e.Actions = append(e.Actions, a)
		}
	}
	e.Errors, _ = d.strings(fs["errors"], path+".errors")
	e.Logs, _ = d.strings(fs["logs"], path+".logs")
	return e
}

// Field names of an action, in the order they are printed.
var actionFields = []string{"rule", "verb", "resource", "subresource", "namespace", "name", "patchType", "patch", "object", "event", "http", "dryRun"}

// alwaysCompared are compared even when the expectation leaves them out.
var alwaysCompared = []string{"verb", "resource", "name"}

var (
	eventFields = []string{"type", "reason", "message"}
	httpFields  = []string{"method", "url", "headers", "body"}
	verbs       = []actions.Verb{actions.Create, actions.Apply, actions.Patch, actions.Delete, actions.Event, actions.HTTP}
)

func (d *decoder) expectedAction(f *File, n *yaml.Node, path string) (ExpectedAction, bool) {
	fs := d.fields(n, path, actionFields...)
	if fs == nil {
		return ExpectedAction{}, false
	}
	ok := true
	str := func(key string) (string, bool) {
		s, good := d.str(fs[key], path+"."+key)
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
				d.errorf(v, "%s.verb: %q is not an action verb (want create, apply, patch, delete, event or http)", path, s)
				ok = false
			}
			out = append(out, Field{key, s})
		case "resource":
			s, good := str(key)
			if good {
				res, err := f.mapper.Resolve(s)
				if err != nil {
					d.errorf(v, "%s.resource: %v%s", path, err, crdHint)
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
				d.errorf(v, "%s.patchType: want merge or json, not %q", path, s)
				ok = false
			}
			out = append(out, Field{key, s})
		case "dryRun":
			out = append(out, Field{key, d.boolean(v, path+".dryRun")})
		case "patch", "object":
			val, good := d.value(v, path+"."+key)
			ok = ok && good
			out = append(out, Field{key, normalize(val)})
		case "event", "http":
			known := eventFields
			if key == "http" {
				known = httpFields
			}
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
				if k == "body" || k == "headers" {
					val, good := d.value(sv, path+"."+key+"."+k)
					ok = ok && good
					inner = append(inner, Field{k, normalize(val)})
					continue
				}
				s, good := d.str(sv, path+"."+key+"."+k)
				ok = ok && good
				inner = append(inner, Field{k, s})
			}
			out = append(out, Field{key, inner})
		}
	}
	if _, present := fs["verb"]; !present {
		d.errorf(n, "%s.verb: required", path)
		ok = false
	}
	if !ok {
		return ExpectedAction{}, false
	}
	return ExpectedAction{Pos: d.pos(n), Fields: out}, true
}

// Error is a problem found while running a case that makes it fail
// without reaching its expectation: an event that cannot apply to the
// cache, such as an update of an object that is not there.
type Error = source.Error

func problem(pos source.Position, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
