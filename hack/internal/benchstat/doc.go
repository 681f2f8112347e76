// Package benchstat holds what the benchmarks in hack/ (bench and
// admissionbench) read the same way: a process's CPU time and resident
// set sizes from /proc, and the percentiles of latencies. The benchmarks
// are commands of their own, so their shared figures live here.
package benchstat
