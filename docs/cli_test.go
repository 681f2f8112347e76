package docs

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
)

// commandOptions are the command lines of kreact's commands, by the name
// of their help file in cmd/kreact/help (a space in the name as a dash).
func commandOptions() map[string]cmdline.Options {
	return map[string]cmdline.Options{
		"run":                &cmdline.RunOptions{},
		"explain":            &cmdline.ExplainOptions{},
		"watch":              &cmdline.WatchOptions{},
		"validate":           &cmdline.ValidateOptions{},
		"test":               &cmdline.TestOptions{},
		"record":             &cmdline.RecordOptions{},
		"preview":            &cmdline.PreviewOptions{},
		"webhooks":           &cmdline.WebhooksOptions{},
		"rbac":               &cmdline.RBACOptions{},
		"finalizers-release": &cmdline.ReleaseOptions{},
		"version":            &cmdline.VersionOptions{},
	}
}

// TestCLIFlagsDocumented checks that docs/cli.md names every flag that a
// command's --help lists, where a reader of that command looks: in its
// line of the synopsis, its own section, or the common flags. A flag
// with a short name may be named by either.
func TestCLIFlagsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	common := section(doc, "## Common flags")
	if common == "" {
		t.Fatal(`docs/cli.md has no "## Common flags" section`)
	}

	// Every command with a help file is checked, so that a new command
	// cannot slip past this test.
	helps, err := filepath.Glob(filepath.Join(root, "cmd", "kreact", "help", "*.txt"))
	if err != nil || len(helps) == 0 {
		t.Fatalf("no help files in cmd/kreact/help: %v", err)
	}
	options := commandOptions()
	for _, h := range helps {
		name := strings.TrimSuffix(filepath.Base(h), ".txt")
		if _, ok := options[name]; !ok && name != "kreact" && name != "finalizers" { // the overview and a group of subcommands
			t.Errorf("cmd/kreact/help/%s.txt has no command line in this test's commandOptions", name)
		}
	}

	for name, o := range options {
		command := "kreact " + strings.ReplaceAll(name, "-", " ")
		own := section(doc, "## "+command)
		if own == "" {
			t.Errorf("docs/cli.md has no section %q", "## "+command)
		}
		text := synopsis(doc, command) + own + common
		fs := cmdline.NewFlagSet(name, "", "")
		o.AddFlags(fs)
		for _, f := range flagNames(fs) {
			if !mentions(text, f.long) && (f.short == "" || !mentions(text, f.short)) {
				t.Errorf("docs/cli.md: %s's flag --%s is named neither in its synopsis, its section, nor the common flags", command, f.long)
			}
		}
	}
}

type flagName struct{ long, short string }

// flagNames lists fs's flags by their long name, each with its short
// name, if any (cmdline registers a short name as a flag of its own
// whose usage is "short for --LONG").
func flagNames(fs *cmdline.FlagSet) []flagName {
	short := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if long, ok := strings.CutPrefix(f.Usage, "short for --"); ok {
			short[long] = f.Name
		}
	})
	var names []flagName
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Usage, "short for --") {
			names = append(names, flagName{f.Name, short[f.Name]})
		}
	})
	return names
}

// mentions reports whether text names the flag name as -name (one
// letter) or --name, not as the start of a longer flag's name
// (--leader-elect in --leader-elect-name).
func mentions(text, name string) bool {
	dashes := "--"
	if len(name) == 1 {
		dashes = "-"
	}
	return regexp.MustCompile(`(^|[^-\w])` + dashes + regexp.QuoteMeta(name) + `($|[^-\w])`).MatchString(text)
}

// section returns the text below the heading line heading, up to the next
// heading of the same or a higher level; "" when there is none.
func section(doc, heading string) string {
	lines := strings.Split(doc, "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		return ""
	}
	level := strings.Index(heading, " ")
	var b strings.Builder
	for _, l := range lines[start+1:] {
		if i := strings.Index(l, " "); i > 0 && i <= level && strings.Trim(l[:i], "#") == "" {
			break
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// synopsis returns the lines of doc's first code block that start with
// command and a space.
func synopsis(doc, command string) string {
	_, block, _ := strings.Cut(doc, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var b strings.Builder
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, command+" ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
