// Package metrics exposes what kreact does as Prometheus metrics and serves
// them, with the health endpoints a Kubernetes Deployment probes.
//
// A Recorder owns its own prometheus.Registry: nothing is registered in the
// client library's global registry, so two Recorders (two tests, or two
// engines in one process) never collide, and a scrape shows only kreact's
// series plus the Go runtime and process collectors.
//
// The Recorder is fed three ways:
//
//   - as the engine's Observer (engine.Options.Observer): events delivered
//     to rules, handler calls with their durations and errors, and every
//     attempt at an action with its outcome;
//   - as the MetricsProvider of the rules' action queues
//     (engine.Options.MetricsProvider), labelled by queue name: client-go
//     calls it once per queue and then updates the returned metrics itself;
//   - at scrape time, from the functions given to WatchInformers (the
//     informer gauges) and WatchFinalizers (the objects waiting on a rule's
//     finalizer, and the age of the oldest wait, which is therefore current
//     at every scrape). Nothing is polled in between: a scrape costs one
//     call of each function, which is cheap (dynamicinformer.Manager.Status
//     and engine.Engine.Finalizing take no lock for long and make no
//     request).
//
// Every method of a Recorder is safe for concurrent use and cheap enough to
// be called from an informer's event handler.
//
// Handler serves /metrics, /healthz, /readyz and, when asked, the pprof
// endpoints. /healthz says the process is alive (it is never made to depend
// on the API server: a liveness probe that fails when the API server is down
// restarts every replica at the worst moment); /readyz says whether this
// replica is doing its job, and gives the reason when it is not.
//
// With ServerOptions.ExplainAddr, Listen also serves kreact explain's
// endpoint (package explain) on an address of its own, which must be a
// loopback address: its answers name objects, label values and script
// errors, so nothing outside the Pod may reach it (kubectl exec or
// kubectl port-forward do), whatever the cluster's network policies.
// It is off unless asked for, and only reads.
//
// Listen binds the endpoints' addresses at once (a busy port is an error at
// startup, and nothing is left listening), and Server.Start serves them
// until its context ends and returns once the servers have shut down, as
// a lifecycle.Runnable. Readiness is kreact run's /readyz: a standby is
// ready, a leader once its rules are loaded and caught up.
//
// Metric names follow the Prometheus conventions: a kreact_ prefix, base
// units (seconds), _total for counters. The workqueue series mirror the ones
// client-go's queues export in Kubernetes components, under kreact_workqueue_
// with a "name" label.
package metrics
