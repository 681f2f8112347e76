package ruletest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

// Options configure Run. The zero value runs the tests and prints one line
// per case.
type Options struct {
	// Update rewrites the expect.actions of every case whose actions
	// differ from the expectation with the actions the rules asked for,
	// keeping the rest of the file and its comments. Such a case counts as
	// updated, not failed, unless something else fails too. Cases that
	// pass are left alone, so deliberately partial expectations stay
	// partial.
	Update bool
	// Verbose prints the actions and logs of passing cases too.
	Verbose bool
	// Explain prints, for each failing case, what each rule knows of each
	// object the case's events name: which spec.watch entry leaves it
	// out and why, what became of each change (ignored by which
	// spec.ignoreChanges path…), the calls and the actions. It is kreact
	// explain's answer, made by the same code.
	Explain bool
}

// Summary counts what Run did, and says what failed.
type Summary struct {
	Files, Cases, Passed, Failed, Updated int
	// Differs says, for each failed case, what differs:
	// "FILE/CASE: the actions; unexpected script errors" (Result.Differs).
	Differs []string
}

// Files returns the test files that paths stand for: a file given by name;
// in a directory, its *.yaml and *.yml files but those whose documents are
// all rules or CustomResourceDefinitions, and the files of RuleTest
// documents in its subdirectories, so that `kreact test examples/` finds
// examples/tests/*.yaml beside the rules they test. A directory without
// any is an error too.
func Files(paths ...string) ([]string, error) {
	var errs diag.ErrorList
	var files []string
	for _, p := range paths {
		fi, statErr := os.Stat(p)
		if statErr != nil || !fi.IsDir() {
			more, err := rules.Files(p)
			files = append(files, more...)
			if err != nil {
				errs = append(errs, err.(diag.ErrorList)...)
			}
			continue
		}
		n := len(files)
		top, err := rules.Files(p)
		if err != nil {
			errs = append(errs, err.(diag.ErrorList)...)
		}
		for _, f := range top {
			if !rules.FileIs(f, func(t rules.TypeMeta) bool {
				return t.IsCRD() || (t.Kind == rules.Kind && t.APIVersion == rules.APIVersion)
			}) {
				files = append(files, f)
			}
		}
		files = append(files, rules.NestedFiles(p, isTestDocument)...)
		if len(files) == n {
			errs.Add(diag.Position{File: p}, "no test files (*.yaml, *.yml) in this directory")
		}
	}
	return unique(files), errs.Err()
}

// unique drops the files listed before, under any spelling of their path.
func unique(files []string) []string {
	seen := make(map[string]bool, len(files))
	out := files[:0]
	for _, f := range files {
		key := filepath.Clean(f)
		if abs, err := filepath.Abs(f); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, f)
		}
	}
	return out
}

// isTestDocument reports whether a document is a RuleTest.
func isTestDocument(t rules.TypeMeta) bool { return t.Kind == Kind && t.APIVersion == APIVersion }

// Run loads the test files that paths stand for (see Files), runs every
// case and prints a report to w in the style of go test: one line per case
// ("--- PASS: file/case (1ms)" or "--- FAIL: ..." followed by what
// differs) and a summary line starting with "ok" or "FAIL".
//
// If any file is invalid, nothing runs: the error is a diag.ErrorList of
// every problem in every file. Otherwise the error is nil and the Summary
// says whether cases failed. Run stops early when ctx ends.
func Run(ctx context.Context, paths []string, w io.Writer, opts Options) (Summary, error) {
	var sum Summary
	files, err := Files(paths...)
	if err != nil {
		return sum, err
	}
	var errs diag.ErrorList
	var loaded []*File
	for _, path := range files {
		f, err := LoadFile(path)
		if err != nil {
			errs.AddError(diag.Position{}, err)
			continue
		}
		loaded = append(loaded, f)
	}
	if len(errs) > 0 {
		errs.Sort()
		return sum, errs
	}

	start := time.Now()
	for _, f := range loaded {
		sum.Files++
		f.Explain = opts.Explain
		results := f.Run(ctx)
		updated := 0
		for _, r := range results {
			sum.Cases++
			name := f.Path + "/" + r.Case.Name
			d := r.Duration.Round(time.Millisecond)
			update := opts.Update && r.Problem == nil && r.ActionsDiff != ""
			switch {
			case r.Passed():
				sum.Passed++
				fmt.Fprintf(w, "--- PASS: %s (%v)\n", name, d)
				if opts.Verbose {
					printDetails(w, f, r)
				}
			case update && len(r.Failures) == 0:
				sum.Updated++
				fmt.Fprintf(w, "--- UPDATE: %s (%v): expect.actions rewritten\n", name, d)
			default:
				sum.Failed++
				sum.Differs = append(sum.Differs, name+": "+strings.Join(r.Differs(), "; "))
				fmt.Fprintf(w, "--- FAIL: %s (%v)\n", name, d)
				printFailure(w, f, r, update)
			}
			if update {
				f.setActions(r.Case, r.Actions)
				updated++
			}
		}
		if updated > 0 {
			if err := f.write(); err != nil {
				return sum, fmt.Errorf("update %s: %w", f.Path, err)
			}
		}
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	what := fmt.Sprintf("%s in %s", plural(sum.Cases, "case"), plural(sum.Files, "file"))
	if sum.Updated > 0 {
		what += fmt.Sprintf(", %d updated", sum.Updated)
	}
	if sum.Failed > 0 {
		fmt.Fprintf(w, "FAIL\t%d of %s failed (%v)\n", sum.Failed, what, elapsed)
	} else {
		fmt.Fprintf(w, "ok  \t%s (%v)\n", what, elapsed)
	}
	return sum, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	s = strings.TrimSuffix(s, "\n")
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

func printFailure(w io.Writer, f *File, r *Result, updated bool) {
	pos := r.Case.Pos
	if r.Problem != nil {
		fmt.Fprint(w, indent(r.Problem.Error(), "    "))
	}
	if r.ActionsDiff != "" {
		note := ""
		if updated {
			note = " (expect.actions rewritten)"
		}
		fmt.Fprintf(w, "    %s: actions differ (-expected +actual)%s:\n", pos, note)
		fmt.Fprint(w, indent(r.ActionsDiff, "      "))
	}
	for _, msg := range r.Failures {
		fmt.Fprintf(w, "    %s: %s", pos, indent(msg, "    ")[4:])
	}
	if len(r.Logs) > 0 {
		fmt.Fprintf(w, "    logs:\n%s", indent(strings.Join(r.Logs, "\n"), "      "))
	}
	if len(r.Explain) > 0 {
		var b strings.Builder
		for _, o := range r.Explain {
			o.WriteText(&b)
		}
		fmt.Fprintf(w, "    explain:\n%s", indent(b.String(), "      "))
	}
}

func printDetails(w io.Writer, f *File, r *Result) {
	list := make([]Fields, len(r.Actions))
	for i, a := range r.Actions {
		list[i] = ActionFields(a, len(f.rules) > 1)
	}
	fmt.Fprintf(w, "    actions:\n%s", indent(renderYAML(list), "      "))
	if len(r.Admission) > 0 {
		fmt.Fprintf(w, "    admission:\n%s", indent(renderYAML(r.Admission), "      "))
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "    errors:\n%s", indent(strings.Join(r.Errors, "\n"), "      "))
	}
	if len(r.Logs) > 0 {
		fmt.Fprintf(w, "    logs:\n%s", indent(strings.Join(r.Logs, "\n"), "      "))
	}
}
