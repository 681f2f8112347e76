// Package leaktest is the one place that says which goroutines may outlive
// a test: every package that starts goroutines checks for leaks with
// go.uber.org/goleak through it, so that the ignore list is the same
// everywhere and each entry says why it is there.
package leaktest
