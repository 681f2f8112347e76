//go:build !e2e

package testcluster

// e2eBuild reports whether the binary was built with -tags e2e, the build
// in which tests may start a control plane.
const e2eBuild = false
