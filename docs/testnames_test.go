package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNamedTestsExist checks that every Go test the user docs name
// (`TestX`, the reader's pointer to the proof of a claim) is a test
// function of the repository. The design notes are left out: they may
// name the tests of experiments that were not kept.
func TestNamedTestsExist(t *testing.T) {
	funcs := regexp.MustCompile(`(?m)^func (Test[A-Z]\w*)\(`)
	defined := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		for _, m := range funcs.FindAllStringSubmatch(string(data), -1) {
			defined[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test[A-Z]\\w*)`")
	for _, d := range userDocs(t, "CONTRIBUTING.md") {
		for i, line := range strings.Split(d.text, "\n") {
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				if !defined[m[1]] {
					t.Errorf("%s:%d: %s is not a test of the repository", d.name, i+1, m[1])
				}
			}
		}
	}
}
