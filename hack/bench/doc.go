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
