package validate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// CRDResources returns the resources the CustomResourceDefinitions of
// files define, and every problem found in them; the resources of the
// files and documents without problems are returned either way.
func CRDResources(files []string) ([]apiresource.Resource, diag.ErrorList) {
	var out []apiresource.Resource
	var errs diag.ErrorList
	for _, file := range files {
		data, err := rules.ReadFile(file)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			errs.AddError(diag.Position{File: file}, err)
			continue
		}
		rs, fileErrs := restmapper.ResourcesFromCRDFile(file, data)
		out = append(out, rs...)
		errs = append(errs, fileErrs...)
	}
	return out, errs
}

// Result is what Check found.
type Result struct {
	// Rules are the rules without problems of format, checked or not
	// (rules.LoadAll).
	Rules []*rules.Rule
	// Resolved are the rules without errors (their scripts compile,
	// their handlers fit and their resources resolve), resolved, in the
	// order of Rules: what `kreact rbac` grants permissions for, and what
	// `kreact test` runs, with their Programs.
	Resolved []*rules.Resolved
	Programs []*scripting.Program
	// Valid are the rules without errors, in the order of Rules: those of
	// Resolved, and with Options.WaitForResources those that wait for
	// their resources. They are what `kreact run` runs.
	Valid []*rules.Rule
	// Failed are the files with an error (of their format, or of a rule
	// of theirs): `kreact run` keeps the rules that run from them as
	// they are (engine.RuleFiles.Failed), but for those of Valid.
	Failed []string
	// Problems are the errors and warnings, sorted by position, each
	// once: the one list of every command (validate prints it, the
	// others its errors).
	Problems diag.ErrorList
	// Files is the number of rule files read.
	Files int
	// NotFound is true when a resource some rule names is unknown to
	// the mapper, not only misspelt: a CRD may be missing from the
	// inputs.
	NotFound bool

	// failed are the sources with an error, Failed's files among them.
	failed map[string]bool
}

// Options say what Check checks the rules against besides their files
// and the resources of its mapper.
type Options struct {
	// Admission is the configuration of the webhooks that serve the
	// rules' admission handlers (admission.Check): a rule that watches a
	// namespace they never intercept is an error. The zero value leaves
	// out kube-system only.
	Admission admission.Options
	// WaitForResources makes a resource that the mapper does not know,
	// and that is no misspelling of one it knows, a CRD not installed
	// yet, which the rule waits for, as kreact run does
	// (engine.CheckOptions), rather than an error.
	WaitForResources bool
}

// Check is the one check of rule files that every command makes
// (validate, webhooks and rbac, test, record, and run at each load), so
// that they report the same problems in the same words. It loads the rule
// files of paths (files, and the YAML files directly in directories, as
// rules.Load reads them, rule objects among them: rules.LoadAll), with
// the scripts of the rules with problems of format, and checks every
// rule that loads as engine.CheckRule does, against mapper and opts: its
// script, its handlers, its resources, kreact.once, its admission
// handlers, and the warnings of what it reads. Every problem is reported at once. It
// returns ctx's error, and no Result, when ctx ends first.
func Check(ctx context.Context, paths []string, mapper apiresource.Resolver, opts Options) (*Result, error) {
	files, _ := rules.Files(paths...)
	rs, broken, failed, err := rules.LoadAll(paths...)
	res, err := check(ctx, rs, broken, err, mapper, opts, failed)
	if err != nil {
		return nil, err
	}
	res.Files = len(files)
	for _, f := range files {
		if res.failed[f] {
			res.Failed = append(res.Failed, f)
		}
	}
	return res, nil
}

// CheckObject is Check of one rule object, a Rule or a ClusterRule with
// the content an unstructured.Unstructured holds (what the API server
// sends kreact's admission server), read as a rules file holding it alone
// reads it (rules.ParseObject): the same checks of every rule, and the
// same problems, in the same words, at the object's positions
// (rule/NAMESPACE/NAME: spec.script:12:5). Result.Files is 0.
func CheckObject(ctx context.Context, content map[string]any, mapper apiresource.Resolver, opts Options) (*Result, error) {
	o, err := rules.ObjectOf(content)
	if err != nil {
		var problems diag.ErrorList
		problems.Add(diag.Position{File: o.Source()}, err.Error())
		return &Result{Problems: problems}, nil
	}
	// JSON is YAML: the object is read as a document of a rules file.
	data, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Source(), err)
	}
	rs, broken, err := rules.ParseAll(o.Source(), data)
	return check(ctx, rs, broken, err, mapper, opts, nil)
}

// check checks what rules.LoadAll or ParseAll loaded: the rules without
// problems of format, as engine.CheckRule does, and the scripts of the
// broken ones (scripting.CheckScript): a field with a problem is missing
// from such a rule, so its warnings and resources wait, but its script
// is checked, so that fixing a rule takes one round. loadErr holds the
// problems of format, failed the files they are in. It returns ctx's
// error when ctx ends first.
func check(ctx context.Context, rs, broken []*rules.Rule, loadErr error, mapper apiresource.Resolver, opts Options, failed []string) (*Result, error) {
	res := &Result{Rules: rs, failed: map[string]bool{}}
	if loadErr != nil {
		res.Problems.AddError(diag.Position{}, loadErr)
	}
	for _, r := range broken {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_, scriptProblems := scripting.CheckScript(r)
		res.Problems = append(res.Problems, scriptProblems.Errors()...)
	}
	// A problem of format is in a document that is not among rs, but for
	// a duplicate name, which is at the rule that repeats it.
	repeated := map[diag.Position]bool{}
	for _, f := range failed {
		res.failed[f] = true
	}
	for _, p := range res.Problems.Errors() {
		repeated[diag.Position{File: p.Pos.File, Line: p.Pos.Line, Col: p.Pos.Col}] = true
	}
	checkOpts := engine.CheckOptions{Admission: opts.Admission, WaitForResources: opts.WaitForResources}
	for _, r := range res.Rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := engine.CheckRule(r, mapper, checkOpts)
		res.NotFound = res.NotFound || c.NotFound
		res.Problems = append(res.Problems, c.Problems...)
		switch {
		case c.Err() != nil || repeated[diag.Position{File: r.Pos.File, Line: r.Pos.Line, Col: r.Pos.Col}]:
			res.failed[r.Source] = true
		case c.Resolved != nil:
			res.Resolved = append(res.Resolved, c.Resolved)
			res.Programs = append(res.Programs, c.Program)
			fallthrough
		default:
			res.Valid = append(res.Valid, r)
		}
	}
	res.Problems.RemoveMultiples()
	return res, nil
}

// RuleFiles is what kreact run and record take of r (engine.RuleFiles):
// the rules to run (Valid), the files with errors (Failed) and the errors
// of Problems, its warnings left out.
func (r *Result) RuleFiles() engine.RuleFiles {
	return engine.RuleFiles{Rules: r.Valid, Failed: r.Failed, Err: r.Problems.Errors().Err()}
}

// NewMapper returns the resolver of resource names that Check takes: the
// resources given (nil: those of a standard kube-apiserver,
// restmapper.Builtin) and those that the CustomResourceDefinitions of
// crdFiles define. Problems in crdFiles are returned, and no mapper.
func NewMapper(resources []apiresource.Resource, crdFiles []string) (*restmapper.Mapper, diag.ErrorList) {
	if resources == nil {
		resources = restmapper.Builtin()
	}
	crds, errs := CRDResources(crdFiles)
	if len(errs) > 0 {
		return nil, errs
	}
	resources = append(slices.Clip(resources), crds...)
	return restmapper.New(restmapper.NewStatic(resources), restmapper.Options{}), nil
}

// WriteProblems writes the problems to w, one a line, as `kreact
// validate` does; when a resource is unknown and live is false (the
// mapper knows no cluster), a hint of what resolves custom resources
// after them.
func (r *Result) WriteProblems(w io.Writer, live bool) {
	for _, p := range r.Problems {
		fmt.Fprintln(w, p)
	}
	if r.NotFound && !live {
		fmt.Fprintln(w, "hint: custom resources resolve with --crd FILE, or against a cluster with --kubeconfig/--context")
	}
}

// Summary is the last line of `kreact validate`: with no errors, ok is
// true and the line counts the rules, the files and any warnings ("ok: 3
// rules in 2 files, 1 warning"); else it counts the errors and warnings
// ("validate: 2 errors, 0 warnings in 1 file").
func (r *Result) Summary() (line string, ok bool) {
	nErr, nWarn := r.Problems.Count()
	nFiles := count(r.Files, "file")
	if nErr > 0 {
		return fmt.Sprintf("validate: %s, %s in %s", count(nErr, "error"), count(nWarn, "warning"), nFiles), false
	}
	line = fmt.Sprintf("ok: %s in %s", count(len(r.Rules), "rule"), nFiles)
	if nWarn > 0 {
		line += ", " + count(nWarn, "warning")
	}
	return line, true
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// CheckValid is Check for the commands that print what a rule set needs,
// kreact rbac and webhooks: what validate refuses they refuse, with every
// error (the warnings refuse nothing). It returns the rules with
// admission handlers too (admission.RulesOf).
func CheckValid(ctx context.Context, paths []string, mapper apiresource.Resolver, opts Options) (*Result, []admission.Rule, error) {
	c, err := Check(ctx, paths, mapper, opts)
	if err == nil {
		err = c.Problems.Errors().Err()
	}
	if err != nil {
		return nil, nil, err
	}
	admitting, err := admission.RulesOf(c.Resolved)
	return c, admitting, err
}

// CheckRunnable is Check for the commands that run the rules of paths
// (kreact record and preview, with options' zero value): the rules that
// run, or an error when any rule has one (kreact test refuses a rule with
// errors, and so does what records a test case; a rule kreact run would
// not load has nothing to preview) or when the files hold no rule
// (engine.RuleFiles.NoRules).
func CheckRunnable(ctx context.Context, paths []string, mapper apiresource.Resolver) ([]*rules.Rule, error) {
	c, err := Check(ctx, paths, mapper, Options{})
	if err != nil {
		return nil, err
	}
	files := c.RuleFiles()
	if err := cmp.Or(files.Err, files.NoRules(paths)); err != nil {
		return nil, err
	}
	return files.Rules, nil
}
