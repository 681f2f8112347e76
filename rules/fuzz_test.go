package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/restmapper"
)

// fuzzDeadline is how long one input may take to parse and resolve before
// the fuzz test calls it a hang; a few milliseconds is usual.
const fuzzDeadline = 20 * time.Second

// deep returns open n times, then middle, then close n times.
func deep(open, middle, close string, n int) string {
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

// ruleSeeds are the rules of the fuzz corpus besides the files under
// testdata and examples: a minimal rule, and the shapes that stress a
// YAML loader: deep flow and block nesting (past yaml.v3's depth limit of
// 10,000 and below it), aliases, merge keys, tabs, many documents, odd
// bytes.
func ruleSeeds() []string {
	const head = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\n"
	valid := head + "spec:\n  watch: [{resource: configmaps, namespaces: [default]}]\n  script: |\n    function onAdd(obj) {}\n"
	var indented strings.Builder
	for i := range 300 {
		indented.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	seeds := []string{
		valid,
		valid + "---\n" + valid,
		strings.Replace(valid, "metadata: {name: r}", "metadata: {name: r}\n", 1) + "  scriptFile: script.js\n",
		head + "spec:\n  watch: [{resource: configmaps}]\n  scriptFile: script.js\n",
		head + "spec:\n  watch: [{resource: configmaps}]\n  scriptFile: ../../etc/hostname\n",
		head + "spec:\n  watch: [{resource: deploymnets}]\n  reads: [confgimaps]\n  permissions: [{resources: [cm], verbs: [patch], namespaces: ['*']}]\n  http: ['http://127.0.0.1:1/ok/']\n  script: x\n",
		head + "spec:\n  watch: [{resource: pods, labelSelector: 'a in (b, c)', fieldSelector: 'spec.nodeName=x'}]\n  every: 10s\n  schedule: '@daily'\n  timeZone: Europe/Paris\n  memoryLimit: 64Mi\n  rateLimit: 0.5\n  script: x\n",
		head + "spec:\n  watch: [{resource: pods}]\n  ignoreChanges: [status, 'metadata.annotations[\"a/b\"]']\n  script: x\n",
		"",
		"---\n---\n# only comments\n",
		"\ufeff" + strings.ReplaceAll(valid, "\n", "\r\n"),
		head + "spec:\n\twatch: []\n",
		head + "spec: &s\n  watch: *s\n",
		head + "spec:\n  <<: {watch: [{resource: pods}]}\n  script: x\n",
		"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nspec: {watch: *c}\n",
		head + "spec:\n  watch: [{resource: pods}]\n  script: \"" + deep("(", "1", ")", 10_000) + "\"\n",
		head + "spec:\n  watch: " + deep("[", "", "]", 10_001) + "\n",
		head + "spec:\n  watch: " + deep("[", "{resource: pods}", "]", 5_000) + "\n  script: x\n",
		head + "spec: " + deep("{a: ", "1", "}", 10_001) + "\n",
		head + "spec:\n  watch:\n  - resource: " + deep("{a: ", "1", "}", 3_000) + "\n",
		deep("- ", "x", "", 2_000) + "\n",
		indented.String(),
		head + "spec:\n  watch: [{resource: pods}]\n  timeout: 1e999s\n  workers: 99999999999999999999999\n  rateLimit: .nan\n  script: x\n",
		"\x00\xff---\n\t- [\n",
		strings.Repeat("---\n", 500),
	}
	return seeds
}

// FuzzParse: whatever a rule file holds, Parse returns within a bounded
// time either rules that passed every check or an ErrorList of positioned,
// bounded messages about that file; never a panic. A parsed rule then
// resolves against the built-in resources, with the same guarantees.
func FuzzParse(f *testing.F) {
	for _, s := range ruleSeeds() {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("testdata/*/*.yaml")
	examples, _ := filepath.Glob("../examples/*.yaml")
	for _, file := range append(files, examples...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// A folder of its own, so that scriptFile reads only what is put there.
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "script.js"), []byte("function onAdd(obj) {}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, "fuzz.yaml")
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})

	f.Fuzz(func(t *testing.T, data []byte) {
		type result struct {
			rules       []*Rule
			err         error
			resolveErrs []error
		}
		done := make(chan result, 1)
		go func() {
			var res result
			res.rules, res.err = Parse(path, data)
			for _, r := range res.rules {
				if _, err := r.Resolve(mapper); err != nil {
					res.resolveErrs = append(res.resolveErrs, err)
				}
			}
			done <- res
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(fuzzDeadline):
			t.Fatalf("Parse and Resolve of %d bytes take longer than %v", len(data), fuzzDeadline)
		}
		for _, err := range res.resolveErrs {
			checkErrors(t, path, data, err)
		}
		if res.err != nil {
			if res.rules != nil {
				t.Errorf("Parse returned %d rules and an error", len(res.rules))
			}
			checkErrors(t, path, data, res.err)
			return
		}
		for _, r := range res.rules {
			if r.Name == "" || len(r.Watch) == 0 || strings.TrimSpace(r.Script) == "" || !r.ScriptPos.IsValid() || r.Source != path || !r.Pos.IsValid() {
				t.Errorf("Parse accepted an incomplete rule: %+v", r)
			}
		}
	})
}

// yamlLines counts the lines of data as YAML (and yaml.v3's positions) do:
// besides "\n", a "\r" not followed by "\n" and the Unicode breaks NEL,
// LS and PS end a line too.
func yamlLines(data []byte) int {
	s := string(data)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

// maxFuzzMessage bounds a message: diag.ErrorList cuts them at 2,000
// bytes and an ellipsis.
const maxFuzzMessage = 2000 + len("…")

// checkErrors checks that err is an ErrorList of errors in file at lines
// the data has, with messages of bounded length.
func checkErrors(t *testing.T, file string, data []byte, err error) {
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Errorf("error %T is not an ErrorList: %.500v", err, err)
		return
	}
	lines := yamlLines(data)
	for _, e := range list {
		if e.Pos.File != file || !e.Pos.IsValid() || e.Pos.Line > lines || e.Pos.Col < 0 {
			t.Errorf("error without a position in %s (of %d lines): %.500v", file, lines, e)
		}
		if e.Msg == "" || len(e.Msg) > maxFuzzMessage {
			t.Errorf("message of %d bytes: %.500s", len(e.Msg), e.Msg)
		}
	}
}
