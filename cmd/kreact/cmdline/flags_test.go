package cmdline

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func testFlags() (*FlagSet, *string, *bool, *[]string) {
	var (
		ns    string
		all   bool
		files []string
	)
	fs := NewFlagSet("demo", "kreact demo [flags]", "A demo command.")
	fs.StringVarP(&ns, "namespace", "n", "", "the namespace")
	fs.BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	fs.ListVarP(&files, "filename", "f", "rule file (repeatable)")
	return fs, &ns, &all, &files
}

// Flags go anywhere among the arguments, short names set the long
// flags, lists repeat and split on commas, and "--" ends the flags.
func TestParse(t *testing.T) {
	fs, ns, all, files := testFlags()
	err := fs.Parse([]string{"one", "-n", "a", "--filename", "x, y", "two", "-f=z", "-A", "--", "-three"})
	if err != nil {
		t.Fatal(err)
	}
	if *ns != "a" || !*all {
		t.Errorf("namespace, all = %q, %v; want a, true", *ns, *all)
	}
	if want := []string{"x", "y", "z"}; !slices.Equal(*files, want) {
		t.Errorf("files = %q, want %q", *files, want)
	}
	if want := []string{"one", "two", "-three"}; !slices.Equal(fs.Args(), want) {
		t.Errorf("args = %q, want %q", fs.Args(), want)
	}
}

func TestParseUnknownFlagIsAUsageError(t *testing.T) {
	fs, _, _, _ := testFlags()
	err := fs.Parse([]string{"--nope"})
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "demo: flag provided but not defined: -nope (see `kreact demo --help`)") {
		t.Errorf("Parse = %v, want a usage error naming the flag", err)
	}
}

// --help prints each short name beside its long one, and defaults other
// than the zero values.
func TestHelpPrintsTheUsage(t *testing.T) {
	fs, _, _, _ := testFlags()
	var out strings.Builder
	fs.Out = &out
	var level string
	var wait time.Duration
	fs.StringVarP(&level, "level", "", "info", "the level")
	fs.DurationVar(&wait, "wait", 0, "how long to wait (0: for ever)")
	if err := fs.Parse([]string{"--help"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("Parse = %v, want ErrHelp", err)
	}
	want := "Usage: kreact demo [flags]\n\nA demo command.\n\nFlags:\n" +
		"  -A, --all-namespaces                 every namespace\n" +
		"  -f, --filename                       rule file (repeatable)\n" +
		"      --level                          the level (default info)\n" +
		"  -n, --namespace                      the namespace\n" +
		"      --wait                           how long to wait (0: for ever)\n"
	if out.String() != want {
		t.Errorf("usage:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestLogFlags(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		usage bool
	}{
		{args: nil},
		{args: []string{"--log-format", "json", "--log-level", "debug"}},
		{args: []string{"--log-format", "xml"}, usage: true},
		{args: []string{"--log-level", "loud"}, usage: true},
	} {
		var l LogFlags
		fs := NewFlagSet("demo", "", "")
		l.Register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		logger, err := l.Logger(&out)
		var usage *UsageError
		if tt.usage != errors.As(err, &usage) {
			t.Errorf("%q: Logger = %v, want a usage error: %v", tt.args, err, tt.usage)
			continue
		}
		if err == nil {
			logger.Debug("hello")
			if debug := strings.Contains(out.String(), "hello"); debug != slices.Contains(tt.args, "debug") {
				t.Errorf("%q: debug logged = %v", tt.args, debug)
			}
		}
	}
}

// TestQuietLogger: at the info level the quiet logger leaves out info and
// keeps warnings; at any other level it logs as Logger does.
func TestQuietLogger(t *testing.T) {
	for _, tt := range []struct {
		level         string
		info, warning bool
	}{
		{"info", false, true},
		{"INFO", false, true},
		{"debug", true, true},
		{"error", false, false},
	} {
		l := LogFlags{Format: "text", Level: tt.level}
		var out strings.Builder
		logger, err := l.QuietLogger(&out)
		if err != nil {
			t.Fatal(err)
		}
		logger.Info("an info line")
		logger.Warn("a warning")
		if info, warning := strings.Contains(out.String(), "an info line"), strings.Contains(out.String(), "a warning"); info != tt.info || warning != tt.warning {
			t.Errorf("--log-level %s: info logged %v, warning %v; want %v, %v", tt.level, info, warning, tt.info, tt.warning)
		}
	}
	if _, err := (&LogFlags{Format: "xml", Level: "info"}).QuietLogger(io.Discard); err == nil {
		t.Errorf("QuietLogger of --log-format xml: no error")
	}
}
