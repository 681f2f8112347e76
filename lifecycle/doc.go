// Package lifecycle runs kreact's long-lived components and stops them in
// order, after the manager of controller-runtime (its runnable groups),
// without depending on it.
//
// A component is a Runnable: Start blocks until its context ends and
// returns only once everything it started has stopped. A Group runs
// components side by side (what every replica runs: discovery, informers,
// the HTTP endpoints); Layers stacks groups (what only the leader or a
// shard owner runs, the rules and their reload, on top of the informers
// they read). The guarantees:
//
//   - Start of a Group or of Layers returns only when every component it
//     started has returned: no goroutine of theirs outlives it.
//   - A component that fails (returns an error) stops its Group; a layer
//     that returns, with or without an error, stops every layer.
//   - Layers start bottom up, each once the one below is ready (see
//     Readier), and stop top down, each once the one above has returned:
//     the rules are stopped, their actions drained, before the informers
//     under them stop.
//   - The errors of every component are joined; context.Canceled, the
//     normal way to stop, is left out.
package lifecycle
