package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// ParseFile reads the rule file at path and parses it with Parse.
func ParseFile(path string) ([]*Rule, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	return Parse(path, data)
}

// Parse parses the rules in data, one per YAML document, and validates
// them. path names the file in positions, and script files are read
// relative to its directory. Documents that are empty (or only comments)
// are skipped.
//
// The error, if any, is an ErrorList with every problem found, sorted by
// position; the rules are then nil. Parse does not compile scripts and does
// not check resource names against a cluster; see Rule.Resolve.
func Parse(path string, data []byte) ([]*Rule, error) {
	var errs diag.ErrorList
	rules := parse(path, data, &errs)
	checkDuplicateNames(rules, &errs)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return rules, nil
}

// Load parses every rule file in paths and checks that rule names are
// unique across all of them. A path that is a directory contributes its
// *.yaml and *.yml files, in name order; it is not read recursively, and
// names starting with "." are skipped (editor backups, and the "..data"
// directories of a mounted ConfigMap). A file named explicitly is read
// whatever its extension; a file named twice is read once.
//
// The error, if any, is an ErrorList with every problem in every file,
// sorted by position; the rules are then nil.
func Load(paths ...string) ([]*Rule, error) {
	var errs diag.ErrorList
	var all []*Rule
	for _, file := range expand(paths, &errs) {
		data, err := ReadFile(file)
		if err != nil {
			errs = append(errs, fileError(file, err))
			continue
		}
		all = append(all, parse(file, data, &errs)...)
	}
	checkDuplicateNames(all, &errs)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return all, nil
}

// LoadEach is Load for a long-running process that must keep going when one
// file is broken: it returns the rules of every file that parses, the files
// that do not (Source of the rules they may have held), and an ErrorList of
// every problem. A rule whose name another file already used is dropped and
// reported; its file counts as failed.
func LoadEach(paths ...string) (rules []*Rule, failed []string, err error) {
	var errs diag.ErrorList
	for _, file := range expand(paths, &errs) {
		data, rerr := ReadFile(file)
		if rerr != nil {
			errs = append(errs, fileError(file, rerr))
			failed = append(failed, file)
			continue
		}
		var fileErrs diag.ErrorList
		rs := parse(file, data, &fileErrs)
		if len(fileErrs) > 0 {
			errs = append(errs, fileErrs...)
			failed = append(failed, file)
			continue
		}
		rules = append(rules, rs...)
	}
	var dupErrs diag.ErrorList
	checkDuplicateNames(rules, &dupErrs)
	if len(dupErrs) > 0 {
		errs = append(errs, dupErrs...)
		dups := map[diag.Position]bool{}
		for _, e := range dupErrs {
			dups[e.Pos] = true
		}
		kept := rules[:0]
		for _, r := range rules {
			if dups[r.Pos] {
				failed = append(failed, r.Source)
				continue
			}
			kept = append(kept, r)
		}
		rules = kept
	}
	errs.Sort()
	return rules, failed, errs.Err()
}

// LoadAll is Load for checkers that report every problem at once, such as
// `kreact validate`. Beside every problem (an ErrorList sorted by
// position, nil when there is none) and the rules without problems, it
// returns the rules whose own documents have problems, decoded as far as
// they go, so that their scripts can be checked too: a field with a
// problem is at its zero value or default, but for spec.schedule, which
// holds what was written, and spec.events, all three when one is
// unknown. Only broken rules with a name, a script and its language are
// returned; they must not run. failed lists the files with a problem of
// their own: unreadable, or a document with a problem (whose position,
// for a rule object, is the object's rather than the file's).
func LoadAll(paths ...string) (rules, broken []*Rule, failed []string, err error) {
	var errs diag.ErrorList
	var checked []*Rule
	for _, file := range expand(paths, &errs) {
		data, rerr := ReadFile(file)
		if rerr != nil {
			errs = append(errs, fileError(file, rerr))
			failed = append(failed, file)
			continue
		}
		n0 := len(errs)
		all, bad := parseAll(file, data, &errs)
		if len(errs) > n0 {
			failed = append(failed, file)
		}
		checked = append(checked, all...)
		good, checkable := splitBroken(all, bad)
		rules, broken = append(rules, good...), append(broken, checkable...)
	}
	checkDuplicateNames(checked, &errs)
	errs.Sort()
	return rules, broken, failed, errs.Err()
}

// ParseAll is LoadAll for the rules in data, as Parse reads them (path
// names them in positions): the rules without problems, the broken rules
// whose scripts can be checked, and every problem.
func ParseAll(path string, data []byte) (rules, broken []*Rule, err error) {
	var errs diag.ErrorList
	all, bad := parseAll(path, data, &errs)
	rules, broken = splitBroken(all, bad)
	checkDuplicateNames(all, &errs)
	errs.Sort()
	return rules, broken, errs.Err()
}

// splitBroken parts rules into those without problems and the broken
// ones whose scripts can be checked: with a name, a script and its
// language.
func splitBroken(all []*Rule, bad map[*Rule]bool) (rules, broken []*Rule) {
	for _, r := range all {
		switch {
		case !bad[r]:
			rules = append(rules, r)
		case r.Name != "" && r.Script != "" && r.ScriptLang != "":
			broken = append(broken, r)
		}
	}
	return rules, broken
}

// Files lists the files that paths stand for, as Load reads them: a file is
// itself; a directory contributes its *.yaml and *.yml files in name order,
// not those of its subdirectories, skipping names that start with ".". A
// file named twice is listed once. The error is an ErrorList naming the
// paths that cannot be read.
func Files(paths ...string) ([]string, error) {
	var errs diag.ErrorList
	files := expand(paths, &errs)
	return files, errs.Err()
}

// expand lists the files that paths stand for, without duplicates.
func expand(paths []string, errs *diag.ErrorList) []string {
	var files []string
	seen := make(map[string]bool)
	add := func(f string) {
		f = filepath.Clean(f)
		key := f
		if abs, err := filepath.Abs(f); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			files = append(files, f)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			*errs = append(*errs, fileError(p, err))
			continue
		}
		if !fi.IsDir() {
			add(p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			*errs = append(*errs, fileError(p, err))
			continue
		}
		for _, e := range entries {
			name := e.Name()
			ext := filepath.Ext(name)
			if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
				continue
			}
			full := filepath.Join(p, name)
			// Follow symlinks (ConfigMap mounts are made of them) and
			// skip directories that happen to be named *.yaml.
			if fi, err := os.Stat(full); err != nil {
				*errs = append(*errs, fileError(full, err))
				continue
			} else if fi.IsDir() {
				continue
			}
			add(full)
		}
	}
	return files
}

func fileError(path string, err error) *diag.Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &diag.Error{Pos: diag.Position{File: path}, Msg: err.Error()}
}

func checkDuplicateNames(rules []*Rule, errs *diag.ErrorList) {
	first := make(map[string]*Rule, len(rules))
	for _, r := range rules {
		if r.Name == "" {
			continue
		}
		if prev, dup := first[r.Name]; dup {
			errs.Addf(r.Pos, "duplicate rule name %q (also at %s)", r.Name, prev.Pos)
			continue
		}
		first[r.Name] = r
	}
}

// parse decodes every document of one file, adding problems to errs.
//
// The file is cut into documents at "---" lines before YAML sees it, so that
// a syntax error in one document does not hide the problems of the others.
// Each document is parsed with the lines before it blanked out, which keeps
// yaml.v3's line numbers those of the file.
func parse(path string, data []byte, errs *diag.ErrorList) []*Rule {
	rules, _ := parseAll(path, data, errs)
	return rules
}

// parseAll is parse, which also tells which rules have problems of their
// own (broken).
func parseAll(path string, data []byte, errs *diag.ErrorList) (rules []*Rule, broken map[*Rule]bool) {
	broken = map[*Rule]bool{}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	d := newDecoder(path, lines, errs)
	for _, doc := range splitDocuments(lines) {
		src := strings.Repeat("\n", doc.start-1) + strings.Join(lines[doc.start-1:doc.end], "\n")
		dec := yaml.NewDecoder(strings.NewReader(src))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if err == io.EOF {
				break
			}
			if err != nil {
				syntaxError(path, lines, doc, err, errs)
				break
			}
			if len(n.Content) > 0 && isManifest(yamlnode.Deref(n.Content[0])) {
				rules = append(rules, d.objects(yamlnode.Deref(n.Content[0]), broken)...)
				continue
			}
			n0 := len(*errs)
			if r := d.rule(&n); r != nil {
				rules = append(rules, r)
				broken[r] = len(*errs) > n0
			}
		}
	}
	return rules, broken
}

// document is a range of lines [start, end], 1-based and inclusive.
type document struct{ start, end int }

// splitDocuments cuts lines at document markers: "---" at the start of a
// line, alone or followed by a space. YAML allows nothing else to begin that
// way, even inside a multi-line string.
func splitDocuments(lines []string) []document {
	var docs []document
	start := 1
	for i, l := range lines {
		n := i + 1
		if n > start && (l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "---\t")) {
			docs = append(docs, document{start, n - 1})
			start = n
		}
	}
	return append(docs, document{start, len(lines)})
}

// syntaxError reports the YAML syntax error err of one document.
//
// yaml.v3 reports a line, often that of the enclosing block rather than of
// the mistake, and no column. The line found by syntaxLine is better: the
// first line from which on the document no longer parses. The column is
// that of the tab when the line is indented with one, the most common
// mistake, and otherwise the line's first character.
func syntaxError(path string, lines []string, doc document, err error, errs *diag.ErrorList) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := doc.start
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, text
			}
		}
	}
	if l, ok := syntaxLine(lines, doc); ok {
		line = l
	}
	line = min(max(line, doc.start), doc.end)
	text := lines[line-1]
	ws := len(text) - len(strings.TrimLeft(text, " \t"))
	if tab := strings.IndexByte(text[:ws], '\t'); tab >= 0 {
		errs.Add(diag.Position{File: path, Line: line, Col: tab + 1}, "tab character in indentation; YAML indents with spaces only")
		return
	}
	errs.Add(diag.Position{File: path, Line: line, Col: ws + 1}, "invalid YAML: "+msg)
}

// maxSyntaxScan and maxSyntaxWork bound the work of syntaxLine, which is
// quadratic in the length of the document: it parses at most
// maxSyntaxScan prefixes, of at most maxSyntaxWork bytes in all, then
// falls back to the line yaml.v3 reports. Without the byte bound, a file
// of 2,000 long lines with an unclosed bracket near its top took minutes.
const (
	maxSyntaxScan = 2000
	maxSyntaxWork = 4 << 20
)

// syntaxLine returns the line after the longest prefix of doc that parses:
// every longer prefix, up to the whole document, is broken. A mistake in a
// line makes it and everything after it unparseable, while the lines
// before it still parse; a construct left open at the end of a prefix (a
// flow list continued on the next line) also fails, but the longest prefix
// that parses lies past it.
func syntaxLine(lines []string, doc document) (int, bool) {
	if doc.end-doc.start > maxSyntaxScan {
		return 0, false
	}
	size := 0 // of the prefix ending before line end+1
	for _, l := range lines[doc.start-1 : doc.end-1] {
		size += len(l) + 1
	}
	work := 0
	for end := doc.end - 1; end >= doc.start; end-- {
		if work += size; work > maxSyntaxWork {
			return 0, false
		}
		if parses(lines[doc.start-1 : end]) {
			return end + 1, true
		}
		size -= len(lines[end-1]) + 1
	}
	return doc.start, true
}

func parses(lines []string) bool {
	dec := yaml.NewDecoder(strings.NewReader(strings.Join(lines, "\n")))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case err == io.EOF:
			return true
		case err != nil:
			return false
		}
	}
}

// Find returns the rule called name from the rule files in paths. A file
// that does not load is reported only when the rule is not found
// elsewhere, with the names of the rules found, so that a broken file
// beside the rule does not hide it.
func Find(name string, paths ...string) (*Rule, error) {
	rs, _, loadErr := LoadEach(paths...)
	var names []string
	for _, r := range rs {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	err := fmt.Errorf("no rule %q in %s", name, strings.Join(paths, ", "))
	if len(names) > 0 {
		err = fmt.Errorf("%w (rules there: %s)", err, strings.Join(names, ", "))
	}
	return nil, errors.Join(err, loadErr)
}
