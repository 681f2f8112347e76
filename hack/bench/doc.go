// Command bench measures kreact's whole path against a bare client-go
// controller doing the same work, on a local control plane it starts
// itself (`make bench-e2e`).
//
// Both controllers mirror data.seq of each ConfigMap into the annotation
// bench/seq with a merge patch, and skip objects where they already agree.
// kreact runs the real binary (`kreact run`) with a rule; the bare
// controller is this program re-executed with -bare: a dynamic informer, a
// rate-limited workqueue and the same number of workers, with the same
// client QPS and burst. They run one at a time, each phase in a fresh
// process, alternating.
//
// A phase writes data.seq at a fixed rate for a fixed time (or, for the
// burst, a number of updates as fast as the writers go), then waits for
// the drain: until every object's annotation shows its last value. It
// reports, per phase and controller:
//
//   - write→visible latency, p50 and p99: from a write's return until the
//     object's annotation shows that value or a later one (a coalescing
//     controller skips intermediate values; the write has still been
//     reacted to);
//   - drain: from the end of the load until nothing is left unreacted;
//   - patches the controller sent (kreact's kreact_actions_total, the bare
//     controller's own count);
//   - controller CPU seconds during the phase (/proc/PID/stat) and its
//     peak RSS (VmHWM);
//
// each with the kreact/bare ratio.
//
// The initial sync phase (-sync-objects, off by default) creates, for each
// size, that many ConfigMaps in a namespace of their own (a 1 KiB payload;
// half by server-side apply, so that they carry managedFields, half by a
// plain create), with the annotation already mirrored, so that neither
// controller has anything to write: the phase measures the sync, not the
// patches. Each repeat starts each controller on that namespace (again
// alternating) and reports the time from the process's start to its
// readiness (kreact's /readyz, the bare controller's "synced"), its CPU
// seconds to then and to the end of a window of -sync-window after it (the
// bare controller reconciles the initial adds after its "synced", kreact
// while it syncs), its peak RSS then and at the end of the window (VmHWM),
// and its RSS at the end of the window (VmRSS: the steady state), with the
// kreact/bare ratios of each repeat as median (min–max).
//
// With -kreact-base BIN, the sync phase also runs the kreact binary BIN
// (controller kreact-base) in each repeat, with its own ratios to the bare
// controller: a change measured before and after in one run. The steady
// phases run it too when -controllers names it (e.g.
// -controllers kreact,bare,kreact-base), with kreact-base/bare ratios.
//
// Before anything runs, every binary it measures (-kreact, -kreact-base,
// -many-base and this program, which runs the bare controllers) is
// copied into a temporary directory, one after the other, and run from
// there: a file as the Go linker wrote it gave a higher peak RSS than a
// byte-identical copy, and an older file more CPU than a newer one (see
// docs/design/performance-history.md), so the copies compare the code,
// not the files.
//
// The million phase (-million N, off by default; issue 39) measures kreact
// on N ConfigMaps (1,000,000 is what it is for) against the bare
// controller on -million-bare of them (100,000: a bare informer at a
// million would need some 7.6 GB), whose figures it also reports scaled
// by N/-million-bare, labelled so. The control plane gets an etcd quota
// of 8 GiB (testcluster.Options.EtcdQuotaBytes). The objects are made once
// for all repeats, by plain creates in protobuf from 64 clients (the
// admin client is exempt from the API server's priority and fairness, so
// its CPU is the bound: about 500 a second on two cores, over half an
// hour for a million), with the count and rate every ten seconds and the
// time taken in the report; while a controller syncs, its RSS is printed
// every ten seconds. With -million-heap DIR, kreact's heap profile at
// readiness goes there. Give -fields for the rule's 3-field projection.
//
// The rule-objects phase (-rule-objects N -rule-namespaces M, off by
// default) measures issue 38's rules as Kubernetes objects against the
// same rules as files: N idle rules (each watches the ConfigMaps of one of
// M namespaces, where there are none; a distinct script each). Each repeat
// runs, in fresh processes, kreact run -f on one file per namespace (and
// on one rule, the baseline of memory), and kreact run --rule-objects with
// no rule, to which it then gives the N Rule objects, created by 32
// clients at once. It reports the time to all running (files: to /readyz
// with kreact_rules_loaded at N; objects: from the first create to
// kreact's log of every object running, to /readyz, and to every
// object's status saying Ready), the memory per idle rule (VmRSS after
// -rule-window, and VmHWM, above the baseline), kreact's CPU seconds to
// all running and over the window, and the writes of the objects' status
// that the API server counted (apiserver_request_total, PATCH of
// rules/status) until all are Ready and over the window after. With
// -rule-profile DIR it also writes a CPU profile of kreact over each
// window and a heap profile at its end.
//
// The large-CRD phase (-crds N, off by default; crds.go) measures what
// CRDs of Cluster API's size cost at start: N generated CRDs, each with
// two served versions of a 120 KiB openAPIV3Schema (nested objects and
// arrays, many properties, a description on each; the same index gives
// the same CRD), applied server-side. Without them and then with them,
// each repeat (-crd-repeats) starts kreact with the mirror rule on a
// namespace of 100 ConfigMaps (kreact run -f) and, alternating which goes
// first, the baseline: this program re-executed with -bare-discovery,
// which builds client-go's memory-cached discovery client and a deferred
// discovery RESTMapper, resolves ConfigMaps through them and runs one
// dynamic informer, the least a controller that resolves its resources
// does. It reports each process's time from its start to ready, its peak
// RSS then and at the end of -crd-window, and its RSS then (idle), with
// the kreact/bare ratios per repeat as median (min–max), and what the
// CRDs added to each. With -crd-profile DIR it writes a heap profile of
// each process at the end of each window.
// The many-rules phase (-many-rules N, off by default; manyrules.go)
// measures N rules on the same three resources (ConfigMaps, Secrets and a
// CRD's widgets; rule j watches resource j%3) against one of them alone
// and against N bare controllers. The -many-objects objects carry a label
// bench-group; each rule selects -many-per-write groups of its resource
// with spec.watch[].labelSelector (the rules of a resource share one
// watch, which selects for each of them in Go), keeps
// spec.watch[].fields of its own (seq and one of five other fields),
// ignores annotation changes, and mirrors seq into its own annotation
// bench.kreact.dev/rJ by merge patch; every object is selected by exactly
// -many-per-write rules. Each repeat runs every variant in a fresh process
// (rotating the order): kreact-1 (rule 0 alone, written only on its own
// objects), kreact-N, bare-N (N controllers in one process, each with its
// own client, dynamic informer with the label selector sent to the
// server, and workqueue, -many-bare-workers workers each), bareprocs-N
// (the same, a process each), and, with -many-base BIN, base-1 and base-N
// (another kreact binary, to compare two builds in one run). Before each
// run the benchmark mirrors every value itself, so no run starts with
// work; then it writes seq at -many-rate reactions per second (writes per
// second divided by the rules per write) for -many-load, waits until
// every reactor's annotation shows every write, and reports per run the
// API server's watches of the three resources that the variant opened
// (apiserver_longrunning_requests), its patches, CPU per reaction (CPU
// seconds of the load and the drain over the patches), its peak RSS and
// its RSS -many-settle after the drain (summed over the processes of
// bareprocs-N) with the CPU used in between (what a process does once
// the load is over, such as returning memory, is not in its CPU per
// reaction), and writes left unreacted; then medians (min–max) and the
// ratios, taken per repeat, and the memory per rule beyond the first.
// With -many-profile DIR it writes a CPU profile of each N-rule kreact
// over the load, and of every kreact variant its /metrics (the Go
// runtime's heap, heap goal and stacks), fetched just before its RSS is
// read, then heap and goroutine profiles (the heap profile collects
// first, so it comes after the RSS; its text's HeapAlloc is the live
// heap).
//
// With -explain, kreact runs with --explain-address, which keeps each
// rule's trace, and each sync phase times one kreact explain answer at
// readiness, with every object cached.
//
// With -fields, kreact's rule has spec.watch[].fields (a projection: its
// cache keeps those paths and the identity metadata); the bare controller
// always caches whole objects.
//
// With -profile DIR, each steady phase also writes a CPU profile of each
// controller over the phase's length (both serve /debug/pprof/) into DIR,
// named for the phase and the controller: compare them with
// `go tool pprof -diff_base DIR/200pers-bare-*.pprof DIR/200pers-kreact-*.pprof`.
//
// The machine is shared and noisy: read ratios from one run, not absolute
// figures across runs.
package main
