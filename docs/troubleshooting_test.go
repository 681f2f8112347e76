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
	checked := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, " | ")
		if !strings.HasPrefix(row, "| `") || len(cells) < 2 {
			continue
		}
		for _, q := range quote.FindAllStringSubmatch(strings.TrimPrefix(cells[0], "| "), -1) {
			checked += checkLogLine(t, code, "docs/troubleshooting.md", q[1])
		}
	}
	if checked < 10 {
		t.Errorf("only %d log lines found in the table: the table parser is broken", checked)
	}
}

// TestLogLinesInDocs checks, as TestTroubleshootingLogLines does, the log
// lines that the prose of the user docs quotes: "the log line `…`",
// "logs `…`", "logged as `…`".
func TestLogLinesInDocs(t *testing.T) {
	code := productCode(t)
	// A quote may be broken across lines.
	space := regexp.MustCompile(`\s*\n\s*`)
	quoted := regexp.MustCompile("(?:log lines?|logs|logged as) `([^`]+)`")
	checked := 0
	for _, d := range userDocs(t) {
		for _, m := range quoted.FindAllStringSubmatch(space.ReplaceAllString(d.text, " "), -1) {
			checked += checkLogLine(t, code, d.name, m[1])
		}
	}
	if checked < 5 {
		t.Errorf("only %d quoted log lines found in the docs: the pattern is broken", checked)
	}
}

// checkLogLine checks that code writes the log line that file quotes,
// and returns how many parts of it were checked: the parts of three words
// or more, between the gaps (…, "x", {…}) and the "; " of a composed
// message, without the attributes (key=value) a quote may show.
func checkLogLine(t *testing.T, code, file, quote string) int {
	t.Helper()
	gap := regexp.MustCompile(`…|"[^"]*"|\{[^}]*\}`)
	checked := 0
	for _, part := range gap.Split(quote, -1) {
		for _, piece := range strings.Split(part, "; ") {
			var words []string
			for _, w := range strings.Fields(strings.Trim(piece, " :;,")) {
				if !strings.Contains(w, "=") {
					words = append(words, w)
				}
			}
			if len(words) < 3 {
				continue
			}
			checked++
			if !wordsIn(code, words) {
				t.Errorf("%s quotes %q, which no Go file outside tests and hack/ writes", file, strings.Join(words, " "))
			}
		}
	}
	return checked
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
