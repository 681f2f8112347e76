package finalizers

import (
	"errors"

	"github.com/kreact/kreact/apiresource"
)

// Resolver resolves resource names as kubectl does (restmapper.Mapper).
type Resolver interface {
	Resolve(ref string) (apiresource.Resource, error)
}

// Targets returns what Release scans for `kreact finalizers release`: each
// resource that refs name once, in namespace if it is namespaced and
// namespace is not empty, else in every namespace. Targets have no label
// selector whatever the rule's selectors, because an object keeps the
// finalizer after it leaves them. When some names do not resolve, it
// returns their errors, joined, and no targets.
func Targets(m Resolver, refs []string, namespace string) ([]Target, error) {
	var targets []Target
	seen := map[string]bool{}
	var invalid []error
	for _, ref := range refs {
		res, err := m.Resolve(ref)
		if err != nil {
			invalid = append(invalid, err)
			continue
		}
		if seen[res.GVR.String()] {
			continue
		}
		seen[res.GVR.String()] = true
		ns := namespace
		if !res.Namespaced {
			ns = ""
		}
		targets = append(targets, Target{Resource: res, Namespace: ns})
	}
	if len(invalid) > 0 {
		return nil, errors.Join(invalid...)
	}
	return targets, nil
}
