package validate

import (
	"context"
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
	// order of Rules: what `kreact rbac` grants permissions for.
	Resolved []*rules.Resolved
	// Problems are the errors and warnings, sorted by position, each
	// once.
	Problems diag.ErrorList
	// Files is the number of rule files read.
	Files int
	// NotFound is true when a resource some rule names is unknown to
	// the mapper, not only misspelt: a CRD may be missing from the
	// inputs.
	NotFound bool
}

// Options say what Check checks the rules against besides their files
// and the resources of its mapper.
type Options struct {
	// Admission is the configuration of the webhooks that serve the
	// rules' admission handlers (admission.Check): a rule that watches a
	// namespace they never intercept is an error. The zero value leaves
	// out kube-system only.
	Admission admission.Options
}

// Check loads the rule files of paths (files, and the YAML files directly
// in directories, as rules.Load reads them) and checks every rule that
// loads: rules.Check (its script compiles, its handlers fit), and the
// resources it names resolve with mapper; then engine.CheckReads (what the
// handlers read is in the rule's spec.watch[].fields), rules.CheckOnce
// (the rule may patch what kreact.once marks) and admission.Check (what
// the API server can send its admission handlers, with opts.Admission).
// The scripts of rules with problems of format are checked too
// (rules.LoadAll): every problem is reported at once. It returns ctx's
// error, and no Result, when ctx ends first.
func Check(ctx context.Context, paths []string, mapper *restmapper.Mapper, opts Options) (*Result, error) {
	res := &Result{}
	files, _ := rules.Files(paths...)
	res.Files = len(files)
	rs, problems, err := rules.LoadChecked(ctx, paths...)
	if err != nil {
		return nil, err
	}
	res.Rules, res.Problems = rs, problems
	for _, r := range res.Rules {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prog, problems := rules.Check(r)
		resolved, err := r.Resolve(mapper)
		if err != nil {
			problems.AddError(r.Pos, err)
			res.NotFound = res.NotFound || hasNotFound(r, mapper)
		} else {
			problems = append(problems, engine.CheckReads(resolved, prog)...)
			problems = append(problems, engine.CheckIgnored(resolved, prog)...)
			problems = append(problems, rules.CheckOnce(resolved, prog)...)
			problems = append(problems, admission.Check(resolved, prog, opts.Admission)...)
		}
		if n, _ := problems.Count(); n == 0 {
			res.Resolved = append(res.Resolved, resolved)
		}
		res.Problems = append(res.Problems, problems...)
	}
	res.Problems.RemoveMultiples()
	return res, nil
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
