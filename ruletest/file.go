package ruletest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/yamlnode"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/validate"
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
	// Explain, if set, makes RunCase fill Result.Explain: the reaction
	// core keeps a trace (delivery.Options.Trace) as under kreact run
	// --explain-address.
	Explain bool

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

// LoadFile reads and checks the test file at path: its rules, CRDs,
// fixtures and cases. Paths in the file are relative to its directory.
//
// The error, if any, is a diag.ErrorList of every problem found, as
// file:line:col messages sorted by position; the File is then nil.
func LoadFile(path string) (*File, error) {
	data, err := rules.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, diag.ErrorList{{Pos: diag.Position{File: path}, Msg: err.Error()}}
	}
	return Parse(path, data)
}

// Parse is LoadFile for a file already read; path names it in messages and
// is the base of its relative paths.
func Parse(path string, data []byte) (*File, error) {
	var errs diag.ErrorList
	f := load(path, data, &errs)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return f, nil
}

func load(path string, data []byte, errs *diag.ErrorList) *File {
	d := newDecoder(path, errs)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			errs.Add(diag.Position{File: path}, "empty file: want a RuleTest document")
		} else {
			pos, msg := yamlnode.SyntaxPos(path, err)
			errs.Add(pos, msg)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		errs.Add(d.Pos(&extra), "a test file holds one RuleTest document; put this one in a file of its own")
	} else if err != io.EOF {
		pos, msg := yamlnode.SyntaxPos(path, err)
		errs.Add(pos, msg)
	}
	if len(doc.Content) == 0 || yamlnode.IsNull(doc.Content[0]) {
		errs.Add(diag.Position{File: path}, "empty document: want a RuleTest")
		return nil
	}
	root := doc.Content[0]
	top := d.fields(root, "", "apiVersion", "kind", "metadata", "spec")
	if top == nil {
		return nil
	}
	f := &File{Path: path, Now: DefaultNow, doc: &doc}
	if n := top["apiVersion"]; n == nil {
		d.Errorf(root, "apiVersion: required; want %q", APIVersion)
	} else if s, ok := d.Str(n, "apiVersion"); ok && s != APIVersion {
		d.Errorf(n, "apiVersion: want %q, not %q", APIVersion, s)
	}
	if n := top["kind"]; n == nil {
		d.Errorf(root, "kind: required; want %q", Kind)
	} else if s, ok := d.Str(n, "kind"); ok && s != Kind {
		d.Errorf(n, "kind: want %q, not %q", Kind, s)
	}
	if n := top["metadata"]; !yamlnode.IsNull(n) {
		md := d.fields(n, "metadata", "name", "description")
		if v := md["name"]; v != nil {
			f.Name, _ = d.Str(v, "metadata.name")
		}
		if v := md["description"]; v != nil {
			f.Description, _ = d.Str(v, "metadata.description")
		}
	}
	specNode := top["spec"]
	if yamlnode.IsNull(specNode) {
		d.Errorf(root, "spec: required")
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
		rs := loadCRDs(filepath.Join(dir, file), d.Pos(crdNodes[i]), errs)
		resources = append(resources, rs...)
	}
	f.mapper = restmapper.New(restmapper.NewStatic(resources), restmapper.Options{})

	// Rules.
	ruleFiles, ruleNodes := d.strings(spec["rules"], "spec.rules")
	switch n := spec["rules"]; {
	case yamlnode.IsNull(n):
		d.Errorf(specNode, "spec.rules: required; list the rule files or directories to test")
	case yamlnode.Deref(n).Kind == yaml.SequenceNode && len(yamlnode.Deref(n).Content) == 0:
		d.Errorf(n, "spec.rules: list at least one rule file or directory")
	}
	if len(ruleFiles) > 0 {
		paths := make([]string, len(ruleFiles))
		for i, file := range ruleFiles {
			paths[i] = filepath.Join(dir, file)
			if _, err := os.Stat(paths[i]); err != nil {
				d.Errorf(ruleNodes[i], "spec.rules[%d]: %s does not exist", i, paths[i])
				paths[i] = ""
			}
		}
		paths = slices.DeleteFunc(paths, func(p string) bool { return p == "" })
		if len(paths) > 0 {
			f.loadRules(paths, errs)
		}
	}

	if n := spec["now"]; !yamlnode.IsNull(n) {
		f.Now = d.time(n, "spec.now")
	}
	for i, item := range d.list(spec["fixtures"], "spec.fixtures") {
		f.Fixtures = append(f.Fixtures, d.fixture(f, dir, item, yamlnode.Index("spec.fixtures", i))...)
	}

	cases := d.list(spec["cases"], "spec.cases")
	if len(cases) == 0 {
		n := spec["cases"]
		if n == nil {
			n = specNode
		}
		d.Errorf(n, "spec.cases: list at least one case")
	}
	seen := map[string]diag.Position{}
	for i, item := range cases {
		c := d.testCase(f, dir, item, yamlnode.Index("spec.cases", i))
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

// loadRules loads, checks and resolves the rules under test, with the
// one check of every command (validate.Check): a rule that kreact run
// would refuse is an invalid test, not one whose cases pass because the
// rule never runs, and its errors are validate's, every one at once.
func (f *File) loadRules(paths []string, errs *diag.ErrorList) {
	// A context that never ends: no error but its end.
	res, _ := validate.Check(context.Background(), paths, f.mapper, validate.Options{})
	problems := res.Problems.Errors()
	*errs = append(*errs, problems...)
	if len(problems) == 0 && len(res.Rules) == 0 {
		errs.Addf(diag.Position{File: f.Path}, "spec.rules: %s hold no rules", strings.Join(paths, ", "))
	}
	f.rules, f.programs = res.Resolved, res.Programs
}

// loadCRDs reads the CustomResourceDefinitions in file and returns the
// resources they define; ref is the spec.crds entry that names it.
func loadCRDs(file string, ref diag.Position, errs *diag.ErrorList) []apiresource.Resource {
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
func documents(file string, data []byte, errs *diag.ErrorList) []*yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out
		}
		if err != nil {
			pos, msg := yamlnode.SyntaxPos(file, err)
			errs.Add(pos, msg)
			return out
		}
		if len(doc.Content) > 0 && !yamlnode.IsNull(doc.Content[0]) {
			out = append(out, doc.Content[0])
		}
	}
}
