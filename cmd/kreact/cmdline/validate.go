package cmdline

// ValidateOptions are kreact validate's flags and arguments.
type ValidateOptions struct {
	// Files are -f and the arguments: rule files, CRD files and
	// directories of either.
	Files     []string
	Resources ResourceFlags
}

// AddFlags registers kreact validate's flags on fs.
func (o *ValidateOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory (repeatable)")
	o.Resources.Register(fs)
}

// Complete takes the files named as arguments.
func (o *ValidateOptions) Complete(args []string) { o.Files = append(o.Files, args...) }

// Validate checks that files are named.
func (o *ValidateOptions) Validate() error {
	if len(o.Files) == 0 {
		return &UsageError{Msg: "validate: no rule files: use -f FILE|DIR"}
	}
	return nil
}
