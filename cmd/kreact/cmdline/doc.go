// Package cmdline is the command line of the kreact command: which
// command the arguments name (Main, with help and the overview), every
// command's flags and arguments, their checks and what they turn into;
// it starts nothing that runs, but the command it is given.
//
// The flag machinery follows kubectl's conventions: flags may follow
// positional arguments, a flag may have a one-letter short name (-n and
// --namespace), list flags repeat and split on commas, and --help prints
// the usage with each short name beside its long one.
//
// Each command has its options, one file a command (run.go is kreact
// run's RunOptions), in kubectl's shape: AddFlags registers the flags,
// Complete takes the positional arguments, Validate checks the whole, in
// the order the command has always reported mistakes, and Parse does the
// three. The groups of flags that commands share, or that configure a
// package, have a type each: ClusterFlags are kubectl's connection flags
// and the client-side rate limits, LogFlags the log format and level,
// InputFlags the rule files of validate, rbac and webhooks and what
// their resource names resolve against, and for kreact run LeaderFlags (package leader), ShardFlags
// (package shard) and ServeFlags (package metrics), for kreact run and
// webhooks AdmissionFlags (package admission). Each turns into the
// options of its package; ClusterFlags.Load into the client config, read
// from the kubeconfig as kubectl reads it, and ClusterFlags.Connect into
// the client stack (package clientstack, not started); InputFlags.Load
// into the rule files and the resolver of their resource names (the
// cluster's discovery, asked once, when Live); LogFlags.Logger into the
// logger, which client-go's klog logs to; kreact explain's resource
// into the cluster's name of it (ExplainOptions.Resolve), kreact
// record's into the cluster's resources (RecordOptions.Resources), and
// kreact finalizers release's, named or read from the rule's files, into
// the resources to scan (ReleaseOptions.Resources). The command builds
// and runs the components (cmd/kreact and the packages).
//
// A mistake in the command line is a UsageError; a mistake in what the
// user names (a selector that does not parse, a certificate file that
// does not match its key, a rule name that cannot be one) an
// InvalidError, as are the packages' own errors of that kind (a
// diag.ErrorList, an engine.NoRulesError, a record.LoadError, a
// finalizers.UnknownRuleError); a cluster that cannot be configured a
// ClusterError. ExitCode maps each to its exit code, in one
// place for every command: Main returns it.
package cmdline
