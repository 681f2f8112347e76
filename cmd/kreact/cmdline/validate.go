package cmdline

// ValidateOptions are kreact validate's flags and arguments: rule files,
// CRD files and directories of either.
type ValidateOptions struct {
	InputFlags
}

// AddFlags registers kreact validate's flags on fs.
func (o *ValidateOptions) AddFlags(fs *FlagSet) { o.Register(fs) }

// Validate checks that files are named.
func (o *ValidateOptions) Validate() error { return o.Check("validate") }
