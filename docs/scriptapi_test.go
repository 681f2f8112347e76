package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kreact/kreact/event"
)

// TestScriptAPIDocumented checks that script-api.md names every handler
// and every value of ctx.event (package event), and every function of
// the kreact and console objects that package scripting installs: a
// function may be named alone (kreact.patch) or in a list
// (kreact.log/warn/error).
func TestScriptAPIDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "script-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, typ := range event.Types() {
		if !strings.Contains(doc, "`"+typ.Handler()+"(") {
			t.Errorf("docs/script-api.md does not name the handler %s", typ.Handler())
		}
		if !strings.Contains(doc, `"`+string(typ)+`"`) {
			t.Errorf("docs/script-api.md does not list %q among the values of ctx.event", typ)
		}
	}

	// scripting has no list of its functions to export; each area of the
	// API installs its own with kreact.add("NAME", …) or console.add.
	files, err := filepath.Glob(filepath.Join(root, "scripting", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	install := regexp.MustCompile(`\b(kreact|console)\.add\("(\w+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range install.FindAllStringSubmatch(string(src), -1) {
			found++
			named := regexp.MustCompile(`\b` + m[1] + `\.(?:\w+/)*` + m[2] + `\b`)
			if !named.MatchString(doc) {
				t.Errorf("docs/script-api.md does not name %s.%s, which %s installs", m[1], m[2], filepath.ToSlash(f[len(root)+1:]))
			}
		}
	}
	if found < 20 {
		t.Errorf("found only %d functions installed in scripting: the pattern is out of date", found)
	}
}
