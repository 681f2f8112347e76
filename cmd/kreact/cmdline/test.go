package cmdline

import (
	"os"

	"github.com/kreact/kreact/ruletest"
)

// DefaultTestDir is what `kreact test` runs without arguments.
const DefaultTestDir = "tests"

// TestOptions are kreact test's flags and arguments.
type TestOptions struct {
	ruletest.Options
	// Paths are the test files and directories, DefaultTestDir if none
	// is named.
	Paths []string

	defaulted bool
}

// AddFlags registers kreact test's flags on fs.
func (o *TestOptions) AddFlags(fs *FlagSet) {
	fs.BoolVarP(&o.Update, "update", "", false, "rewrite expect.actions of the cases whose actions differ with the actual actions")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "also print the actions and logs of passing cases")
	fs.BoolVarP(&o.Explain, "explain", "", false, "for each failing case, say what each rule did with each object the case names, and why: which watch leaves it out, which ignored path swallowed a change, each call and action")
}

// Complete takes the paths, or DefaultTestDir.
func (o *TestOptions) Complete(args []string) {
	o.Paths, o.defaulted = args, len(args) == 0
	if o.defaulted {
		o.Paths = []string{DefaultTestDir}
	}
}

// Validate checks that DefaultTestDir exists when no path is named.
func (o *TestOptions) Validate() error {
	if o.defaulted {
		if _, err := os.Stat(DefaultTestDir); err != nil {
			return &UsageError{Msg: "test: no test files: name files or directories, or run in a directory that has ./" + DefaultTestDir}
		}
	}
	return nil
}
