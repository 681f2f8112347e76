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
// and every value of ctx.event (package event), every key of ctx, and
// every function of the kreact and console objects that package
// scripting installs: a function may be named alone (kreact.patch) or in
// a list (kreact.log/warn/error).
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

	// ctx's keys are scripting's ctxKeys, the keys its view of ctx has.
	view, err := os.ReadFile(filepath.Join(root, "scripting", "view.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`var ctxKeys = \[\]string\{([^}]*)\}`).FindStringSubmatch(string(view))
	if m == nil {
		t.Fatal("scripting/view.go has no ctxKeys: the pattern is out of date")
	}
	for _, key := range strings.Split(m[1], ",") {
		key = strings.Trim(strings.TrimSpace(key), `"`)
		if !strings.Contains(doc, "- `"+key+"`:") {
			t.Errorf("docs/script-api.md does not say what ctx.%s is", key)
		}
		if !regexp.MustCompile(`\{[^}]*\b` + key + `\b[^}]*\}`).MatchString(doc) {
			t.Errorf("docs/script-api.md does not list %s among ctx's keys", key)
		}
	}
}
