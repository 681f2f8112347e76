package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTroubleshootingLogLines checks that every log line that
// troubleshooting.md's "By log line" table quotes is written by kreact's
// code. A quote may leave parts out with … or stand for a value with "x"
// or {…}; each part of three words or more must then be in the code, a
// word of it possibly a format verb (%s) there. A message that the code
// composes ("webhook unreachable" + "; action will be retried") is
// checked part by part, split at "; ".
func TestTroubleshootingLogLines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := section(string(data), "## By log line")
	code := productCode(t)
	quote := regexp.MustCompile("`([^`]+)`")
	gap := regexp.MustCompile(`…|"[^"]*"|\{[^}]*\}`)
	checked := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, " | ")
		if !strings.HasPrefix(row, "| `") || len(cells) < 2 {
			continue
		}
		for _, q := range quote.FindAllStringSubmatch(strings.TrimPrefix(cells[0], "| "), -1) {
			for _, part := range gap.Split(q[1], -1) {
				for _, piece := range strings.Split(part, "; ") {
					words := strings.Fields(strings.Trim(piece, " :;,"))
					if len(words) < 3 {
						continue
					}
					checked++
					if !wordsIn(code, words) {
						t.Errorf("docs/troubleshooting.md quotes %q, which no Go file outside tests and hack/ writes", strings.Join(words, " "))
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d log lines found in the table: the table parser is broken", checked)
	}
}

// wordsIn reports whether code holds words, separated by spaces, each
// word as written or as a format verb.
func wordsIn(code string, words []string) bool {
	var re strings.Builder
	for i, w := range words {
		if i > 0 {
			re.WriteString(` `)
		}
		re.WriteString(`(?:` + regexp.QuoteMeta(w) + `|%[a-z])`)
	}
	return regexp.MustCompile(re.String()).MatchString(code)
}

// productCode returns the text of every Go file of the repository but
// tests and hack/ (tools, not kreact).
func productCode(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "hack" || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
