package restmapper

import (
	"slices"

	"github.com/kreact/kreact/apiresource"
)

//go:generate go test -tags e2e -count=1 -run ^TestBuiltinTableMatchesAPIServer$ . -args -update

// Builtin returns the resources a standard kube-apiserver serves with list
// and watch, as its discovery reports them (names, kinds, scope, short
// names, categories, verbs, preferred versions, in priority order), for
// offline tools: NewStatic(append(Builtin(), crdResources...)). The table
// is generated from a real API server (see builtin_table.go) and checked
// against one by the tests. Each call returns a fresh copy.
func Builtin() []apiresource.Resource {
	out := slices.Clone(builtinTable)
	for i := range out {
		out[i].ShortNames = slices.Clone(out[i].ShortNames)
		out[i].Categories = slices.Clone(out[i].Categories)
		out[i].Verbs = slices.Clone(out[i].Verbs)
	}
	return out
}
