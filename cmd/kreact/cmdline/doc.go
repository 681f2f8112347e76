// Package cmdline is the flag machinery of the kreact command, in
// kubectl's conventions: flags may follow positional arguments, a flag
// may have a one-letter short name (-n and --namespace), list flags repeat
// and split on commas, and --help prints the usage with each short name
// beside its long one. The flag groups that commands share or that map to
// a package's options live here too: ClusterFlags are kubectl's
// connection flags and the client-side rate limits, LogFlags the log
// format and level, for kreact run LeaderFlags (package leader),
// ShardFlags (package shard) and ServeFlags (package metrics), and for
// kreact run and kreact webhooks AdmissionFlags (package admission). Their
// mistakes are UsageErrors, a cluster that cannot be configured a
// ClusterError, so that the command maps each to its exit code.
//
// Each command's flags and their checks are here too, one file a command
// (run.go is kreact run's RunOptions): in kubectl's shape, an Options
// registers its flags (AddFlags), takes the positional arguments
// (Complete) and checks the whole (Validate), and Parse does the three.
// A mistake in what the user names, such as a selector that does not
// parse or a certificate file that does not match its key, is an
// InvalidError. cmd/kreact builds the components from the options.
package cmdline
