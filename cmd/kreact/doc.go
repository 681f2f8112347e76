// Command kreact watches Kubernetes resources and runs JavaScript reaction
// rules on every change. See `kreact help`.
//
// The command only wires packages together: flags (kubectl's conventions)
// become a kubeconfig.Flags and options; internal/kube builds the watch
// stack (discovery → restmapper → dynamicinformer); engine runs the rules;
// ruletest, rules and restmapper serve the offline commands. Errors map to
// exit codes in one place, exitCode in main.go.
package main
