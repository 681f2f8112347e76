// Package demo is the scenario that exercises every example rule against a
// real cluster: it creates the objects each rule reacts to and waits until
// the reaction is visible through the API server.
//
// The same steps serve two masters: `make demo` narrates them to a person,
// and the examples' end-to-end test runs them as subtests, so the demo can
// never show something the tests do not check.
package demo
