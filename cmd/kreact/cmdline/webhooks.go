package cmdline

import "github.com/kreact/kreact/admission"

// WebhooksOptions are kreact webhooks' flags and arguments.
type WebhooksOptions struct {
	// Files are -f and the arguments.
	Files     []string
	Admission AdmissionFlags
	Resources ResourceFlags
	// Config is what Admission describes, set by Validate.
	Config admission.Options
}

// AddFlags registers kreact webhooks' flags on fs.
func (o *WebhooksOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory (repeatable)")
	o.Admission.Register(fs)
	o.Resources.Register(fs)
}

// Complete takes the files named as arguments.
func (o *WebhooksOptions) Complete(args []string) { o.Files = append(o.Files, args...) }

// Validate checks that files are named and the admission flags, and sets
// Config.
func (o *WebhooksOptions) Validate() error {
	if len(o.Files) == 0 {
		return &UsageError{Msg: "webhooks: no rule files: use -f FILE|DIR"}
	}
	var err error
	o.Config, err = o.Admission.Options("webhooks")
	return err
}
