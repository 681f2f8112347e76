package docs

import (
	"bufio"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, the parent of this package's folder.
const root = ".."

// TestRelativeLinks checks every relative link of every Markdown file in
// the repository: the file or folder it names exists inside the
// repository, and its #anchor, if any, is a heading of the Markdown file
// it names.
func TestRelativeLinks(t *testing.T) {
	files := markdownFiles(t)
	for _, must := range []string{"README.md", "CONTRIBUTING.md", "docs/rules.md"} {
		if !slices.Contains(files, must) {
			t.Errorf("%s was not found among the Markdown files %v", must, files)
		}
	}
	anchors := map[string]map[string]bool{} // by file, read once
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(data))
		return anchors[file]
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(data)) {
			checked++
			if problem := checkLink(file, l.target, anchorsOf); problem != "" {
				t.Errorf("%s:%d: link %q: %s", file, l.line, l.target, problem)
			}
		}
	}
	if checked == 0 {
		t.Error("no link found: the link parser is broken")
	}
}

// TestREADMEIsShort keeps README.md a page for newcomers: the references
// belong in docs/.
func TestREADMEIsShort(t *testing.T) {
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		lines++
	}
	if lines > 300 {
		t.Errorf("README.md has %d lines; keep it to 300 and move reference material to docs/", lines)
	}
}

// markdownFiles returns the repository's Markdown files, as slash paths
// relative to root, leaving out hidden folders (.git), bin/, installed
// packages and test data.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkLink returns what is wrong with a link from file (a slash path
// relative to root) to target, or "" when nothing is. Links with a
// scheme (https:, mailto:) lead elsewhere and are not checked.
func checkLink(file, target string, anchorsOf func(string) map[string]bool) string {
	if target == "" {
		return "empty target"
	}
	if scheme.MatchString(target) {
		return ""
	}
	if strings.HasPrefix(target, "/") {
		return "absolute path: write it relative to " + file
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return err.Error()
	}
	dest := file
	if p != "" {
		dest = path.Join(path.Dir(file), p)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "leads out of the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return "no such file or folder: " + dest
		}
	}
	// Anchors of other files (GitHub's #L10 line anchors on code) are
	// not checked.
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if !anchorsOf(dest)[anchor] {
		return "no heading of " + dest + " has the anchor #" + anchor
	}
	return ""
}

var (
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// An inline link or image, [text](target) or [text](target "title");
	// its text may span lines and hold code spans, but not brackets.
	inlineLink = regexp.MustCompile(`!?\[[^\[\]]*\]\(\s*<?([^()\s<>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// A link reference definition, [label]: target.
	definition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?`)
	heading    = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:name|id)="([^"]+)"`)
	fence      = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
)

// A link is a link target and the line it is on.
type link struct {
	target string
	line   int
}

// links returns the links of a Markdown document, leaving out those in
// fenced code blocks and code spans.
func links(doc string) []link {
	text := blankCodeSpans(blankFences(doc))
	var out []link
	for _, re := range []*regexp.Regexp{inlineLink, definition} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, link{
				target: text[m[2]:m[3]],
				line:   1 + strings.Count(text[:m[0]], "\n"),
			})
		}
	}
	slices.SortStableFunc(out, func(a, b link) int { return a.line - b.line })
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document (ATX headings outside fenced code), and those of
// <a name="..."> or <a id="..."> tags.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for line := range strings.SplitSeq(blankFences(doc), "\n") {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		// GitHub numbers repeated headings: x, x-1, x-2...
		if n := seen[s]; n > 0 {
			anchors[s+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(doc, -1) {
		anchors[m[1]] = true
	}
	return anchors
}

// linkText replaces the links in a heading by their text, as GitHub
// renders the heading before it makes the anchor.
var linkText = regexp.MustCompile(`!?\[([^\[\]]*)\]\([^()]*\)`)

// slug is GitHub's anchor for a heading: the rendered text in lower case,
// each space a '-', and every other character that is not a letter, a
// digit, '-' or '_' left out.
func slug(headingText string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(linkText.ReplaceAllString(headingText, "$1")) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// blankFences replaces the lines of fenced code blocks, fences included,
// by empty lines, so that line numbers stay true.
func blankFences(doc string) string {
	lines := strings.Split(doc, "\n")
	open := "" // the fence that opened the current block
	for i, line := range lines {
		m := fence.FindStringSubmatch(line)
		switch {
		case open == "" && m != nil:
			open = m[1]
		case open != "" && m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) &&
			strings.TrimSpace(line[strings.Index(line, m[1])+len(m[1]):]) == "":
			open = ""
		case open == "":
			continue
		}
		lines[i] = ""
	}
	return strings.Join(lines, "\n")
}

// blankCodeSpans replaces the contents of code spans (text between runs of backticks) by
// spaces, newlines kept. A span closes at the next run of as many
// backticks within its paragraph; a run that no such run closes is
// literal text.
func blankCodeSpans(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := runLength(b, i)
		end := -1
		for j := i + n; j < len(b); {
			if b[j] == '\n' && blankLineAt(b, j+1) {
				break // the paragraph ends: no code span
			}
			if b[j] != '`' {
				j++
				continue
			}
			if m := runLength(b, j); m == n {
				end = j + m
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end
	}
	return string(b)
}

// runLength is the number of backticks that start at b[i].
func runLength(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// blankLineAt reports whether the line that starts at b[i] is blank.
func blankLineAt(b []byte, i int) bool {
	for ; i < len(b) && b[i] != '\n'; i++ {
		if b[i] != ' ' && b[i] != '\t' {
			return false
		}
	}
	return true
}

func TestSlug(t *testing.T) {
	for _, tt := range []struct{ name, heading, want string }{
		{"words", "Two commands", "two-commands"},
		{"punctuation dropped", "Compared with shell-operator, kopf and Kyverno", "compared-with-shell-operator-kopf-and-kyverno"},
		{"code span", "`spec.watch`", "specwatch"},
		{"code and colon", "`fields`: keep only what the script reads", "fields-keep-only-what-the-script-reads"},
		{"slash and dots", "Stability of `kreact.dev/v1alpha1`", "stability-of-kreactdevv1alpha1"},
		{"apostrophe and parentheses", "The executable's pages (decision: kept)", "the-executables-pages-decision-kept"},
		{"underscore kept", "snake_case names", "snake_case-names"},
		{"link in heading", "See [rules](rules.md) here", "see-rules-here"},
		{"non-ASCII letter kept", "Café ×2", "café-2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := slug(tt.heading); got != tt.want {
				t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	doc := "# Title\n" +
		"See [a](a.md) and ![img](i.png \"title\").\n" +
		"```yaml\n[not](in-fence.md)\n```\n" +
		"A span `[not](in-span.md)` and [b\nacross lines](b.md#x).\n" +
		"An unclosed ` backtick and [c](c.md).\n" +
		"\n" +
		"[ref]: d.md\n"
	var got []string
	for _, l := range links(doc) {
		got = append(got, l.target+"@"+strconv.Itoa(l.line))
	}
	want := []string{"a.md@2", "i.png@2", "b.md#x@6", "c.md@8", "d.md@10"}
	if !slices.Equal(got, want) {
		t.Errorf("links = %v, want %v", got, want)
	}
}

func TestHeadingAnchors(t *testing.T) {
	doc := "# Title\n## Title\n```\n# not a heading\n```\n### `code` heading ###\n<a name=\"custom\"></a>\n"
	got := headingAnchors(doc)
	for _, want := range []string{"title", "title-1", "code-heading", "custom"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a fenced block counted as a heading: %v", got)
	}
}
