package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cgdiscovery "k8s.io/client-go/discovery"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// resourceFlags choose what resource names resolve against: the built-in
// table of a standard API server plus --crd files, or with --kubeconfig or
// --context a cluster's discovery (plus --crd files).
type resourceFlags struct {
	crds    []string
	cluster clusterFlags
}

func (r *resourceFlags) register(fs *flagSet) {
	fs.listVar(&r.crds, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.cluster.register(fs)
}

// live reports whether names resolve against a cluster.
func (r *resourceFlags) live() bool { return r.cluster.kubeconfig != "" || r.cluster.context != "" }

// mapper returns the resolver of resource names.
func (r *resourceFlags) mapper(ctx context.Context) (*restmapper.Mapper, error) {
	var resources []apiresource.Resource
	if r.live() {
		cfg, _, err := r.cluster.load()
		if err != nil {
			return nil, err
		}
		dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, &clusterError{err}
		}
		cache := discovery.New(dc, discovery.Options{})
		if err := cache.Refresh(ctx); err != nil {
			return nil, &clusterError{fmt.Errorf("discover the API of %s: %w", cfg.Host, err)}
		}
		resources = cache.Snapshot().Resources
	} else {
		resources = restmapper.Builtin()
	}
	var errs rules.ErrorList
	for _, file := range r.crds {
		resources = append(resources, crdResources(file, &errs)...)
	}
	if len(errs) > 0 {
		return nil, &invalidError{errs}
	}
	return restmapper.New(restmapper.NewStatic(resources), restmapper.Options{}), nil
}

// crdResources reads the CustomResourceDefinitions of a YAML file.
func crdResources(file string, errs *rules.ErrorList) []apiresource.Resource {
	data, err := rules.ReadFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		errs.Add(rules.Position{File: file}, err.Error())
		return nil
	}
	var out []apiresource.Resource
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			return out
		} else if err != nil {
			errs.Add(rules.Position{File: file}, "invalid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
			return out
		}
		var m map[string]any
		if err := doc.Decode(&m); err != nil || m == nil {
			continue
		}
		pos := rules.Position{File: file, Line: doc.Line, Col: doc.Column}
		if len(doc.Content) > 0 {
			pos.Line, pos.Col = doc.Content[0].Line, doc.Content[0].Column
		}
		// yaml.v3 gives int for integers; unstructured wants int64.
		obj, err := toJSONMap(m)
		if err != nil {
			errs.Add(pos, err.Error())
			continue
		}
		rs, err := restmapper.ResourcesFromCRD(&unstructured.Unstructured{Object: obj})
		if err != nil {
			errs.Add(pos, err.Error())
			continue
		}
		out = append(out, rs...)
	}
}

// toJSONMap converts what yaml.v3 decodes into JSON-compatible values.
func toJSONMap(m map[string]any) (map[string]any, error) {
	var conv func(v any) (any, error)
	conv = func(v any) (any, error) {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				c, err := conv(x)
				if err != nil {
					return nil, err
				}
				out[k] = c
			}
			return out, nil
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				c, err := conv(x)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		case int:
			return int64(v), nil
		case map[any]any:
			return nil, errors.New("keys must be strings")
		default:
			return v, nil
		}
	}
	out, err := conv(m)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// loadRules loads the rule files. When some files are invalid, the rules of
// the valid ones are returned too, so that they can be checked further.
func loadRules(paths []string) ([]*rules.Rule, rules.ErrorList) {
	rs, err := rules.Load(paths...)
	if err == nil {
		return rs, nil
	}
	var errs rules.ErrorList
	if !errors.As(err, &errs) {
		errs = rules.ErrorList{{Msg: err.Error()}}
	}
	for _, file := range ruleFiles(paths) {
		if more, err := rules.ParseFile(file); err == nil {
			rs = append(rs, more...)
		}
	}
	return rs, errs
}

// ruleFiles lists the files rules.Load reads for paths.
func ruleFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			name, ext := e.Name(), filepath.Ext(e.Name())
			if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
				continue
			}
			if fi, err := os.Stat(filepath.Join(p, name)); err == nil && !fi.IsDir() {
				out = append(out, filepath.Join(p, name))
			}
		}
	}
	return slices.Compact(out)
}

// problem is an error or a warning about a rule file.
type problem struct {
	pos     rules.Position
	msg     string
	warning bool
}

func (p problem) String() string {
	if p.warning {
		return p.pos.String() + ": warning: " + p.msg
	}
	return p.pos.String() + ": " + p.msg
}

func validateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var files []string
	var res resourceFlags
	fs := newFlagSet("validate", "kreact validate -f FILE|DIR [-f ...] [--crd FILE ...] [--kubeconfig K --context C]",
		`Check rule files without running them, and report every problem at once as
file:line:col: the format, the scripts' syntax, their handlers, and the
resources they name and the verbs declared on them.

Resource names resolve against the resources of a standard kube-apiserver
plus the CustomResourceDefinitions of --crd files, and of the CRD manifests
found among the -f paths (in a directory given, or in its subdirectories);
with --kubeconfig or --context, against that cluster's API instead (plus
those CRDs).

Handlers: a rule whose script has no handler for any of its spec.events
(and no onTick for spec.every) would never run, and spec.every without
onTick is an error; a listed event without its handler, a handler for an
event spec.events leaves out, onTick without spec.every and a top-level
function whose name is close to a handler's are warnings.

Exit code 3 if there are errors; warnings alone exit 0.`)
	fs.listVar(&files, "filename", "f", "rule file or directory (repeatable)")
	res.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	files = append(files, fs.Args()...)
	if len(files) == 0 {
		return &usageError{"validate: no rule files: use -f FILE|DIR"}
	}
	files, crds := authoringInputs(files)
	res.crds = append(res.crds, crds...)
	mapper, err := res.mapper(ctx)
	if err != nil {
		return err
	}
	type checked struct {
		rs       []*rules.Rule
		problems []problem
		missing  bool
	}
	// Loading, compiling and resolving may take long on big inputs; a
	// signal ends validate at once.
	c, err := interruptible(ctx, "validate", func() checked {
		var c checked
		rs, loadErrs := loadRules(files)
		c.rs = rs
		for _, e := range loadErrs {
			c.problems = append(c.problems, problem{pos: e.Pos, msg: e.Msg})
		}
		for _, r := range rs {
			if ctx.Err() != nil {
				return c
			}
			prog, err := engine.Compile(r)
			if err != nil {
				c.problems = append(c.problems, scriptProblems(r, err)...)
			} else {
				c.problems = append(c.problems, handlerProblems(r, prog)...)
			}
			if _, err := r.Resolve(mapper); err != nil {
				var list rules.ErrorList
				if errors.As(err, &list) {
					for _, e := range list {
						c.problems = append(c.problems, problem{pos: e.Pos, msg: e.Msg})
					}
				} else {
					c.problems = append(c.problems, problem{pos: r.Pos, msg: err.Error()})
				}
				c.missing = c.missing || hasNotFound(r, mapper)
			}
		}
		return c
	})
	if err != nil {
		return err
	}
	rs, problems, missing := c.rs, c.problems, c.missing
	slices.SortStableFunc(problems, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.pos.File, b.pos.File), cmp.Compare(a.pos.Line, b.pos.Line),
			cmp.Compare(a.pos.Col, b.pos.Col), cmp.Compare(a.msg, b.msg))
	})
	problems = slices.Compact(problems)
	nErr, nWarn := 0, 0
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
		if p.warning {
			nWarn++
		} else {
			nErr++
		}
	}
	if missing && !res.live() {
		fmt.Fprintln(stderr, "hint: custom resources resolve with --crd FILE, or against a cluster with --kubeconfig/--context")
	}
	nFiles := count(len(ruleFiles(files)), "file")
	if nErr > 0 {
		return &invalidError{fmt.Errorf("validate: %s, %s in %s", count(nErr, "error"), count(nWarn, "warning"), nFiles)}
	}
	summary := fmt.Sprintf("%s in %s", count(len(rs), "rule"), nFiles)
	if nWarn > 0 {
		summary += ", " + count(nWarn, "warning")
	}
	fmt.Fprintf(stdout, "ok: %s\n", summary)
	return nil
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// hasNotFound reports whether some resource the rule names is unknown.
func hasNotFound(r *rules.Rule, m *restmapper.Mapper) bool {
	refs := append([]rules.Ref(nil), r.Reads...)
	for _, w := range r.Watch {
		refs = append(refs, rules.Ref{Name: w.Resource})
	}
	for _, p := range r.Permissions {
		refs = append(refs, p.Resources...)
	}
	for _, ref := range refs {
		var nf *restmapper.NotFoundError
		if _, err := m.Resolve(ref.Name); errors.As(err, &nf) {
			return true
		}
	}
	return false
}

// scriptProblems turns a compile error (an engine.RuleError) into
// positioned problems.
func scriptProblems(r *rules.Rule, err error) []problem {
	var list rules.ErrorList
	if !errors.As(err, &list) {
		return []problem{{pos: r.Pos, msg: err.Error()}}
	}
	out := make([]problem, len(list))
	for i, e := range list {
		out[i] = problem{pos: e.Pos, msg: e.Msg}
	}
	return out
}

// handlerProblems checks the script's handlers against spec.events and
// spec.every with the engine's own check (what it rejects, run rejects
// too), and warns about misspelt handlers.
func handlerProblems(r *rules.Rule, prog *scripting.Program) []problem {
	var out []problem
	for _, p := range engine.CheckHandlers(r, prog) {
		out = append(out, problem{pos: p.Pos, msg: p.Msg, warning: p.Warning})
	}
	return append(out, misspelledHandlers(r)...)
}

var handlerNames = []string{"onAdd", "onUpdate", "onDelete", "onTick", "onTimer"}

// misspelledHandlers warns about top-level functions and variables whose
// names are close to a handler's ("onUpate", "onadd"): the engine would
// never call them.
func misspelledHandlers(r *rules.Rule) []problem {
	lineOff, colOff := 0, 0
	if r.ScriptFile == "" {
		lineOff, colOff = max(0, r.ScriptPos.Line-1), max(0, r.ScriptPos.Col-1)
	}
	prg, err := parser.ParseFile(nil, r.ScriptPos.File, strings.Repeat("\n", lineOff)+r.Script, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil
	}
	var out []problem
	check := func(id *ast.Identifier) {
		if id == nil {
			return
		}
		name := id.Name.String()
		if slices.Contains(handlerNames, name) {
			return
		}
		for _, h := range handlerNames {
			if strings.EqualFold(name, h) || editdistance.Distance(name, h) <= 2 {
				p := prg.File.Position(int(id.Idx) - prg.File.Base())
				pos := rules.Position{File: r.ScriptPos.File, Line: p.Line, Col: p.Column}
				if p.Line > lineOff && colOff > 0 {
					pos.Col += colOff
				}
				out = append(out, problem{pos: pos, warning: true, msg: fmt.Sprintf("rule %s: %s is not a handler and is never called (did you mean %s?)", rules.Quote(r.Name), rules.Shorten(name), h)})
				return
			}
		}
	}
	for _, st := range prg.Body {
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			check(st.Function.Name)
		case *ast.VariableStatement:
			for _, b := range st.List {
				id, _ := b.Target.(*ast.Identifier)
				check(id)
			}
		case *ast.LexicalDeclaration:
			for _, b := range st.List {
				id, _ := b.Target.(*ast.Identifier)
				check(id)
			}
		}
	}
	return out
}
