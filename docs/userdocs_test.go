package docs

import (
	"os"
	"path/filepath"
	"testing"
)

// userDoc is one of the pages a user reads: its path from the
// repository's root, with slashes, and its text.
type userDoc struct {
	name, text string
}

// userDocs returns the user docs (docs/*.md and the README) and the
// extra pages named (paths from the repository's root), read whole: what
// the tests that check the docs' facts against the code read. docs/design
// is left out: it may name what was removed.
func userDocs(t *testing.T, extra ...string) []userDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, e := range extra {
		files = append(files, filepath.Join(root, filepath.FromSlash(e)))
	}
	docs := make([]userDoc, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, userDoc{name: filepath.ToSlash(f[len(root)+1:]), text: string(data)})
	}
	return docs
}
