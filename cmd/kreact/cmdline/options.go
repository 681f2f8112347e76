package cmdline

// Options is one command's command line, in kubectl's shape: AddFlags
// registers its flags, Complete takes the positional arguments and
// Validate checks the whole, in the order the command reports mistakes.
type Options interface {
	AddFlags(fs *FlagSet)
	Complete(args []string)
	Validate() error
}

// Parse registers o's flags on fs, parses args into them, and completes
// and validates o.
func Parse(fs *FlagSet, args []string, o Options) error {
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Complete(fs.Args())
	return o.Validate()
}

// NamespaceFor is the namespace kubectl would use: every namespace ("")
// with -A, else -n, else the kubeconfig context's.
func NamespaceFor(flag string, all bool, contextNS string) string {
	switch {
	case all:
		return ""
	case flag != "":
		return flag
	}
	return contextNS
}
