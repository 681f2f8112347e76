package cmdline

import "fmt"

// VersionOptions are kreact version's flags.
type VersionOptions struct {
	// Output is "" (text), "json" or "yaml", as kubectl version -o.
	Output string

	args []string
}

// AddFlags registers kreact version's flags on fs.
func (o *VersionOptions) AddFlags(fs *FlagSet) {
	fs.StringVarP(&o.Output, "output", "o", "", "yaml or json (default: text)")
}

// Complete keeps the arguments, which Validate refuses.
func (o *VersionOptions) Complete(args []string) { o.args = args }

// Validate checks the output format and that no argument is given.
func (o *VersionOptions) Validate() error {
	switch {
	case len(o.args) > 0:
		return &UsageError{Msg: fmt.Sprintf("version: unexpected argument %q", o.args[0])}
	case o.Output != "" && o.Output != "yaml" && o.Output != "json":
		return &UsageError{Msg: fmt.Sprintf("version: -o %s: want yaml or json", o.Output)}
	}
	return nil
}
