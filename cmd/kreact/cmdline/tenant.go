package cmdline

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
)

// TenantFlags are kreact run's --tenant-* flags: what a team's Rule (a
// rule object in a namespace) may have beyond its namespace
// (rules.TenantLimits); and whom it acts as, --default-service-account
// and --only-default-service-account (engine.Identity), modelled on
// Flux's kustomize-controller, whose --default-service-account is the
// same lockdown.
type TenantFlags struct {
	Identity    engine.Identity
	Limits      rules.TenantLimits
	memoryLimit string
}

// Register adds the --tenant-* flags to fs.
func (t *TenantFlags) Register(fs *FlagSet) {
	fs.BoolVarP(&t.Limits.HTTP, "tenant-http", "", false, "with --rule-objects, allow a Rule in a namespace to call URLs (spec.http); off, such a Rule does not run")
	fs.BoolVarP(&t.Limits.Admission, "tenant-admission", "", false, "with --rule-objects and --admission-bind-address, serve the admission handlers (onValidate, onMutate) of a Rule in a namespace, for requests in its namespace; off, such a Rule's handlers are not served")
	fs.IntVar(&t.Limits.MaxWorkers, "tenant-max-workers", 0, "with --rule-objects, the most spec.workers a Rule in a namespace may ask for (0: the format's limit)")
	fs.IntVar(&t.Limits.MaxActionWorkers, "tenant-max-action-workers", 0, "with --rule-objects, the most spec.actionWorkers a Rule in a namespace may ask for (0: the format's limit)")
	fs.StringVarP(&t.memoryLimit, "tenant-max-memory-limit", "", "", "with --rule-objects, the most spec.memoryLimit a Rule in a namespace may ask for, e.g. 64Mi (empty: the format's limit)")
	fs.DurationVar(&t.Limits.MaxTimeout, "tenant-max-timeout", 0, "with --rule-objects, the longest spec.timeout a Rule in a namespace may ask for (0: the format's limit)")
	fs.Float64Var(&t.Limits.MaxRateLimit, "tenant-max-rate-limit", 0, "with --rule-objects, the highest spec.rateLimit a Rule in a namespace may ask for, in actions a second (0: the format's limit)")
	fs.StringVarP(&t.Identity.DefaultServiceAccount, "default-service-account", "", engine.DefaultServiceAccount,
		"with --rule-objects, the ServiceAccount of its namespace that a Rule in a namespace acts as (impersonated) when it names none in spec.serviceAccountName")
	fs.BoolVarP(&t.Identity.OnlyDefault, "only-default-service-account", "", false,
		"with --rule-objects, refuse a Rule in a namespace that names another ServiceAccount than --default-service-account")
}

// Validate parses --tenant-max-memory-limit and checks that no ceiling is
// negative.
func (t *TenantFlags) Validate() error {
	if t.memoryLimit != "" {
		q, err := resource.ParseQuantity(t.memoryLimit)
		if err != nil || q.Value() <= 0 {
			return &UsageError{Msg: fmt.Sprintf("run: --tenant-max-memory-limit %q: want a positive quantity such as 64Mi", t.memoryLimit)}
		}
		t.Limits.MaxMemoryLimit = q.Value()
	}
	if sa := t.Identity.DefaultServiceAccount; len(validation.IsDNS1123Subdomain(sa)) > 0 {
		// A team's Rule never acts as kreact itself: there is no "none".
		return &UsageError{Msg: fmt.Sprintf("run: --default-service-account %q: %s", sa, strings.Join(validation.IsDNS1123Subdomain(sa), "; "))}
	}
	l := t.Limits
	if l.MaxWorkers < 0 || l.MaxActionWorkers < 0 || l.MaxTimeout < 0 || l.MaxRateLimit < 0 {
		return &UsageError{Msg: "run: the --tenant-max-* flags may not be negative"}
	}
	return nil
}
