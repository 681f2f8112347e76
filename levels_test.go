package kreact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// levels are kreact's packages from the bottom up, each a name and the
// packages it holds, as paths within the module ("." is the module's root
// package; "dir/..." is dir and every package below it, unless a longer
// entry names one). A package may import the packages of its own level
// and of the levels below it, never one above: the import graph then
// reads from the top (the command) down to what everything uses, and a
// change low down cannot reach up. Every package must be in a level, so
// that a new one is placed on purpose. CONTRIBUTING.md ("Levels") says
// the same in words; change both together.
//
// Only the code that is built into a package counts (with and without
// the e2e build tag), not its tests: a test may use what sits above its
// package (an end-to-end test builds the client stack), and Go forbids
// the cycles that could make.
var levels = []level{
	// diag and lifecycle import no kreact package, so that anything,
	// internal/ included, can report a user's mistakes and run components.
	{"foundations", "diag lifecycle"},
	// internal/ holds leaves: machinery with no users outside, which
	// imports no kreact package outside internal/ but the foundations.
	{"internal", "internal/..."},
	// What the rest says things with: resources and the fields of
	// objects.
	{"vocabulary", "apiresource projection"},
	// What talks to the API server: its resources, their names, informers,
	// leases, shards, the actions kreact takes and its finalizers.
	{"cluster", "discovery restmapper dynamicinformer leader shard actions finalizers"},
	// What delivery and scripting say of a change: events, outcomes
	// (which hold actions), verdicts, script errors.
	{"events", "event"},
	// The cluster level assembled for one cluster.
	{"client stack", "clientstack"},
	// The rule files: their format, and what a rule may do. No script
	// runs here, so what only reads rules needs no JavaScript runtime.
	{"rule files", "rules"},
	// The JavaScript API, and a rule's script compiled and checked
	// against its rule.
	{"scripts", "scripting"},
	// What reaches a rule's handlers and what is derived from it: calls per
	// object, admission, explanations, RBAC, the replica's identity.
	{"delivery", "delivery admission explain rbac replica"},
	// The running rule set, and its metrics.
	{"engine", "engine metrics"},
	// What runs or checks a whole rule set around the engine: isolated
	// rules, validation, offline tests, recording.
	{"around the engine", "isolation validate ruletest record ruleobjects"},
	// The command, the tools, and the packages that only test the
	// repository's files.
	{"commands and tools", "cmd/... hack/... deploy docs examples ."},
}

// level is a named level of packages, space-separated.
type level struct{ name, packages string }

// TestNoImportClimbsUpTheLevels reads the import graph of the module's
// packages from go list, as built with and without the e2e build tag.
func TestNoImportClimbsUpTheLevels(t *testing.T) {
	module := goList(t, "list", "-m")
	graph := map[string][]string{}
	for _, tags := range []string{"", "e2e"} {
		out := goList(t, "list", "-tags="+tags, "-json=ImportPath,Imports", "./...")
		dec := json.NewDecoder(strings.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Imports    []string
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("decode go list's output: %v", err)
			}
			graph[p.ImportPath] = append(graph[p.ImportPath], p.Imports...)
		}
	}
	if len(graph) == 0 {
		t.Fatal("go list listed no package")
	}
	for _, problem := range checkLevels(strings.TrimSpace(module), graph, levels) {
		t.Error(problem)
	}
}

// withoutScriptRuntime are the packages that must not reach the
// JavaScript runtime, even through another package: they name rules and
// events, and run no script (their doc.go files say so).
var withoutScriptRuntime = []string{"./event", "./rules", "./delivery", "./metrics"}

// TestNoScriptRuntimeBelowScripting reads the dependencies of
// withoutScriptRuntime, tests left out, as built with and without the
// e2e build tag, and names each package that brings goja in.
func TestNoScriptRuntimeBelowScripting(t *testing.T) {
	for _, tags := range []string{"", "e2e"} {
		for _, pkg := range withoutScriptRuntime {
			deps := strings.Fields(goList(t, "list", "-tags="+tags, "-deps", pkg))
			if slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, "github.com/dop251/goja") }) {
				t.Errorf("%s (tags %q) imports the JavaScript runtime: %s", pkg, tags, strings.Join(gojaImporters(t, tags, pkg), ", "))
			}
		}
	}
}

// gojaImporters returns the packages among pkg's dependencies that
// import goja directly.
func gojaImporters(t *testing.T, tags, pkg string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(goList(t, "list", "-tags="+tags, "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && slices.Contains(fields[1:], "github.com/dop251/goja") {
			out = append(out, fields[0])
		}
	}
	return out
}

func goList(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// checkLevels returns a line for each import of graph (package → the
// packages it imports) that climbs up the levels, each package of module
// in no level, and each entry of the levels that names no package.
func checkLevels(module string, graph map[string][]string, levels []level) []string {
	var problems []string
	used := map[string]bool{}
	// levelOf returns the index of the level of pkg, a package of module,
	// or -1.
	levelOf := func(pkg string) int {
		rel := "."
		if pkg != module {
			rel = strings.TrimPrefix(pkg, module+"/")
		}
		best, bestLen, bestEntry := -1, -1, ""
		for i, l := range levels {
			for _, entry := range strings.Fields(l.packages) {
				n, ok := matches(entry, rel)
				if ok && n > bestLen {
					best, bestLen, bestEntry = i, n, entry
				}
			}
		}
		if best >= 0 {
			used[bestEntry] = true
		}
		return best
	}
	inModule := func(pkg string) bool { return pkg == module || strings.HasPrefix(pkg, module+"/") }
	for _, pkg := range sortedKeys(graph) {
		from := levelOf(pkg)
		if from < 0 {
			problems = append(problems, fmt.Sprintf("%s is in no level: place it in the levels of levels_test.go and of CONTRIBUTING.md", short(module, pkg)))
			continue
		}
		imports := slices.Clone(graph[pkg])
		slices.Sort(imports)
		for _, imp := range slices.Compact(imports) {
			if !inModule(imp) {
				continue
			}
			if to := levelOf(imp); to > from {
				problems = append(problems, fmt.Sprintf("%s → %s (level %d %q imports level %d %q)",
					short(module, pkg), short(module, imp), from+1, levels[from].name, to+1, levels[to].name))
			}
		}
	}
	for _, l := range levels {
		for _, entry := range strings.Fields(l.packages) {
			if !used[entry] {
				problems = append(problems, fmt.Sprintf("level %q lists %s, which is no package (or only a package that a longer entry places)", l.name, entry))
			}
		}
	}
	return problems
}

// matches reports whether entry (a path, or a path ending in "/...")
// names the package at rel, and how long the matching part is, so that
// the longest entry wins.
func matches(entry, rel string) (int, bool) {
	if dir, ok := strings.CutSuffix(entry, "/..."); ok {
		return len(dir), rel == dir || strings.HasPrefix(rel, dir+"/")
	}
	return len(entry) + 1, rel == entry // an exact entry beats a pattern of the same folder
}

func short(module, pkg string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The check itself: an import of a level above is named with both
// levels, a package in no level and an entry that names no package are
// reported, and imports within a level or down, and of other modules,
// are not.
func TestCheckLevels(t *testing.T) {
	const m = "example.com/m"
	testLevels := []level{
		{"low", "base internal/..."},
		{"mid", "core internal/special"},
		{"top", "cmd/... ."},
	}
	tests := []struct {
		name  string
		graph map[string][]string
		want  []string
	}{{
		name: "down and across",
		graph: map[string][]string{
			m:                       {m + "/core", "fmt"},
			m + "/cmd/tool":         {m + "/core", m + "/base", m + "/cmd/tool/flags"},
			m + "/cmd/tool/flags":   nil,
			m + "/core":             {m + "/base", m + "/internal/x", m + "/internal/special", "example.org/other"},
			m + "/base":             {m + "/internal/y"},
			m + "/internal/x":       {m + "/base"},
			m + "/internal/y":       nil,
			m + "/internal/special": {m + "/core"},
		},
	}, {
		name: "up",
		graph: map[string][]string{
			m:                       nil,
			m + "/cmd/tool":         nil,
			m + "/core":             {m + "/cmd/tool", m},
			m + "/base":             {m + "/core"},
			m + "/internal/x":       {m + "/internal/special"},
			m + "/internal/special": nil,
		},
		want: []string{
			`base → core (level 1 "low" imports level 2 "mid")`,
			`core → . (level 2 "mid" imports level 3 "top")`,
			`core → cmd/tool (level 2 "mid" imports level 3 "top")`,
			`internal/x → internal/special (level 1 "low" imports level 2 "mid")`,
		},
	}, {
		name: "unplaced and unused",
		graph: map[string][]string{
			m:               nil,
			m + "/cmd/tool": nil,
			m + "/base":     nil,
			m + "/newpkg":   {m + "/cmd/tool"},
		},
		want: []string{
			"newpkg is in no level: place it in the levels of levels_test.go and of CONTRIBUTING.md",
			`level "low" lists internal/..., which is no package (or only a package that a longer entry places)`,
			`level "mid" lists core, which is no package (or only a package that a longer entry places)`,
			`level "mid" lists internal/special, which is no package (or only a package that a longer entry places)`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkLevels(m, tt.graph, testLevels); !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
