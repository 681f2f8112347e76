// Package buildinfo says which build of kreact is running: the version and
// commit the build set, else those the Go toolchain stamped into the
// binary, with the Go version and platform (Resolve), and prints it as
// `kreact version` does (Build.Write). kreact_build_info (package metrics)
// carries the same values.
//
// It guarantees that a version and a commit are never empty, and that a
// binary built from a tree with changes never passes for its commit: its
// version says "dirty".
package buildinfo
