package rules

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kreact/kreact/diag"
)

// TenantLimits are what an administrator allows a team's Rule (a rule
// with a Namespace, from ParseObject) beyond its namespace: kreact run's
// --tenant-* flags. The zero value allows no HTTP and sets no ceiling.
// Administrators' rules (files, ClusterRules) are not bound by them.
type TenantLimits struct {
	// HTTP allows spec.http (kreact.http calls to the URLs it names).
	HTTP bool
	// Admission allows a Rule admission handlers (onValidate, onMutate),
	// their webhooks limited to the Rule's namespace as its watches are;
	// admission.TenantCheck checks it, for only a compiled script tells
	// whether it has them.
	Admission bool
	// MaxWorkers, MaxActionWorkers, MaxMemoryLimit, MaxTimeout and
	// MaxRateLimit are ceilings on the fields of those names; zero sets
	// none (the format's own limits hold).
	MaxWorkers       int
	MaxActionWorkers int
	MaxMemoryLimit   int64
	MaxTimeout       time.Duration
	MaxRateLimit     float64
}

// Check returns a problem for each thing r asks for beyond l, if r is a
// team's Rule; nil for any other rule. The problems are reported at the
// rule, as ParseObject reports its own, naming the field and the limit.
func (l TenantLimits) Check(r *Rule) diag.ErrorList {
	if r.Namespace == "" {
		return nil
	}
	var errs diag.ErrorList
	at := diag.Position{Rule: r.Name, File: r.Source}
	over := func(field string, got, limit any) {
		errs.Add(at, fmt.Sprintf("%s: %v is over the limit for a Rule in a namespace, %v (kreact run --tenant-max-%s)", field, got, limit, flagName(field)))
	}
	if len(r.HTTP) > 0 && !l.HTTP {
		errs.Add(at, "spec.http: a Rule in a namespace may not call URLs unless kreact runs with --tenant-http")
	}
	if l.MaxWorkers > 0 && r.Workers > l.MaxWorkers {
		over("spec.workers", r.Workers, l.MaxWorkers)
	}
	if l.MaxActionWorkers > 0 && r.ActionWorkers > l.MaxActionWorkers {
		over("spec.actionWorkers", r.ActionWorkers, l.MaxActionWorkers)
	}
	if l.MaxMemoryLimit > 0 && r.MemoryLimit > l.MaxMemoryLimit {
		over("spec.memoryLimit", resource.NewQuantity(r.MemoryLimit, resource.BinarySI), resource.NewQuantity(l.MaxMemoryLimit, resource.BinarySI))
	}
	if l.MaxTimeout > 0 && r.Timeout > l.MaxTimeout {
		over("spec.timeout", r.Timeout, l.MaxTimeout)
	}
	if l.MaxRateLimit > 0 && r.RateLimit > l.MaxRateLimit {
		over("spec.rateLimit", r.RateLimit, l.MaxRateLimit)
	}
	return errs
}

// flagName is the --tenant-max-* flag of a spec field.
func flagName(field string) string {
	return map[string]string{
		"spec.workers": "workers", "spec.actionWorkers": "action-workers", "spec.memoryLimit": "memory-limit",
		"spec.timeout": "timeout", "spec.rateLimit": "rate-limit",
	}[field]
}
