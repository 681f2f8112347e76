// Package examples holds kreact's example rules (YAML and JavaScript, not
// Go), their offline tests in tests/, the Backup CRD in crds/, and an
// end-to-end test that runs every rule against a real control plane
// through the scenario `make demo` narrates.
package examples
