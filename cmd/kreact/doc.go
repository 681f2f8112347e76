// Command kreact watches Kubernetes resources and runs JavaScript reaction
// rules on every change. See `kreact help`.
//
// The command only parses flags, builds components and prints: each
// command's flags and their checks are its options in cmd/kreact/cmdline
// (kubectl's conventions), which become a kubeconfig.Flags and the
// packages' options; internal/kube builds the watch stack (discovery →
// restmapper → dynamicinformer); engine runs the rules and follows their
// files, replica names this replica and joins its shard group, leader or
// shard decide whether this replica runs them, isolation runs the
// isolated ones in a second process, admission serves their admission
// handlers on every replica, metrics serves the endpoints, and lifecycle
// runs all of these as components and stops them in order
// (kreact run). cmd/kreact/tail is kreact watch, validate is kreact
// validate and what kreact rbac refuses, rbac what it prints, admission
// what kreact webhooks prints, finalizers is kreact finalizers release,
// record is kreact record, explain answers kreact explain (served by
// kreact run, asked by the command) and kreact test --explain; ruletest,
// rules and restmapper serve the offline commands. Each command's --help
// text is a file in help/. Every goroutine a command starts has stopped
// when it returns, except a rule load abandoned on a signal
// (lifecycle.Interruptible). Errors map to exit codes in one place,
// cmdline.ExitCode.
package main
