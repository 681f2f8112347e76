package validate

import (
	"os"

	"github.com/kreact/kreact/rules"
)

// Inputs sorts the -f paths of `kreact validate` and `kreact rbac`, so
// that both read a folder the same way. A file whose every document is a
// CustomResourceDefinition counts as a --crd file: given by name, directly
// in a directory given, or anywhere under it (examples/crds/). The other
// files given by name, and the other YAML files directly in a directory
// given, are rule files, except files of RuleTest documents. Paths that do
// not exist go to the rule files, whose loader reports them.
func Inputs(paths []string) (ruleFiles, crdFiles []string) {
	isCRD := rules.TypeMeta.IsCRD
	isTest := func(t rules.TypeMeta) bool { return t.Kind == "RuleTest" && t.APIVersion == rules.APIVersion }
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			if err == nil && rules.FileIs(p, isCRD) {
				crdFiles = append(crdFiles, p)
			} else {
				ruleFiles = append(ruleFiles, p)
			}
			continue
		}
		top, _ := rules.Files(p)
		for _, f := range top {
			switch {
			case rules.FileIs(f, isCRD):
				crdFiles = append(crdFiles, f)
			case rules.FileIs(f, isTest):
			default:
				ruleFiles = append(ruleFiles, f)
			}
		}
		crdFiles = append(crdFiles, rules.NestedFiles(p, isCRD)...)
	}
	return ruleFiles, crdFiles
}
