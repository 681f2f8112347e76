// Package memlimit sets Go's soft memory limit from the container's: a
// pod's memory limit is a cgroup's (v2, or v1), and a process over it is
// killed by the kernel, while Go's collector, told of a soft limit
// (runtime/debug.SetMemoryLimit), returns memory before it gets there.
// GOMEMLIMIT, when set, wins.
package memlimit
