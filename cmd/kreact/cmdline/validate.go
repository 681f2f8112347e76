package cmdline

import "github.com/kreact/kreact/admission"

// ValidateOptions are kreact validate's flags and arguments: rule files,
// CRD files and directories of either, and the admission flags of kreact
// webhooks, so that the same command line checks what webhooks prints.
type ValidateOptions struct {
	InputFlags
	Admission AdmissionFlags
	// Config is what Admission describes (AdmissionFlags.CheckOptions),
	// set by Validate.
	Config admission.Options
}

// AddFlags registers kreact validate's flags on fs.
func (o *ValidateOptions) AddFlags(fs *FlagSet) {
	o.Register(fs)
	o.Admission.Register(fs)
}

// Validate checks that files are named and the admission flags, and sets
// Config.
func (o *ValidateOptions) Validate() error {
	if err := o.Check("validate"); err != nil {
		return err
	}
	var err error
	o.Config, err = o.Admission.CheckOptions("validate")
	return err
}
