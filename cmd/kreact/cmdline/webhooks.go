package cmdline

import "github.com/kreact/kreact/admission"

// WebhooksOptions are kreact webhooks' flags and arguments.
type WebhooksOptions struct {
	InputFlags
	Admission AdmissionFlags
	// ValidateRules prints the configuration of rule objects too
	// (admission.RuleObjectsConfiguration).
	ValidateRules bool
	// Config is what Admission describes, set by Validate.
	Config admission.Options
}

// AddFlags registers kreact webhooks' flags on fs.
func (o *WebhooksOptions) AddFlags(fs *FlagSet) {
	o.Register(fs)
	o.Admission.Register(fs)
	fs.BoolVarP(&o.ValidateRules, "admission-validate-rules", "", false,
		"also print the ValidatingWebhookConfiguration --admission-name-rule-objects that kreact run --admission-validate-rules applies: Rule and ClusterRule objects checked at apply")
}

// Validate checks that files are named and the admission flags, and sets
// Config.
func (o *WebhooksOptions) Validate() error {
	if err := o.Check("webhooks"); err != nil {
		return err
	}
	var err error
	o.Config, err = o.Admission.Options("webhooks")
	return err
}
