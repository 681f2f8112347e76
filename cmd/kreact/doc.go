// Command kreact watches Kubernetes resources and runs JavaScript reaction
// rules on every change. See `kreact help`.
//
// The command only lists commands, builds components and prints. Each
// command's flags, their checks and what they turn into (the client
// config and stack, the rule files and what their names resolve against,
// the resources named) are its options in cmd/kreact/cmdline, its --help
// text a file in help/. kreact run builds the watch stack
// (clientstack), the reader of its rule files (validate.Reader, read
// once at the start as the process's isolation.Role has it), the
// engine and what follows the rule files (engine), this replica (replica;
// leader or shard decide whether it runs the rules), the isolated rules'
// process (isolation), the admission server (admission) and the endpoints
// (metrics), and runs them as components (lifecycle). The other commands
// call the package they are named for, but watch (cmd/kreact/tail), test
// (ruletest), webhooks (admission), preview (record) and version
// (internal/buildinfo); rbac and webhooks refuse what validate refuses
// (validate.CheckValid), record and preview run what run would
// (validate.CheckRunnable). Every
// goroutine a command starts has stopped when it returns, except a rule
// load abandoned on a signal (lifecycle.Interruptible). main lists the
// commands; cmdline.Main runs the one named and maps its error to an exit
// code in one place, cmdline.ExitCode.
package main
