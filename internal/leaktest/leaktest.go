package leaktest

import (
	"testing"

	"go.uber.org/goleak"
)

// Options are the goroutines no test counts as leaked, followed by extra.
// Each is owned by a library or is process-wide, and either lives as long as
// the process or stops by itself shortly after its last use.
func Options(extra ...goleak.Option) []goleak.Option {
	return append([]goleak.Option{
		// Idle keep-alive connections of client-go's shared transports,
		// kept for the next client of the same host.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		// klog's flush daemon, started once per process by client-go.
		goleak.IgnoreAnyFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		// regexp2 runs a clock goroutine while match timeouts are in use;
		// it stops by itself about a second after the last match.
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"),
		// The script governor's reclaimer returns the memory of a call
		// stopped for its memory limit to the operating system; it is
		// process-wide and ends by itself half a second after the last
		// such call.
		goleak.IgnoreAnyFunction("github.com/kreact/kreact/internal/governor.(*reclaimer).loop"),
		// The governor's collector pacer is process-wide too, and ends by
		// itself three seconds after the last call that misbehaved.
		goleak.IgnoreAnyFunction("github.com/kreact/kreact/internal/governor.(*gcPacer).loop"),
		// The test control plane's process waiters (a restarted API
		// server has a new one).
		goleak.IgnoreAnyFunction("github.com/kreact/kreact/internal/testcluster.(*process).start.func1"),
	}, extra...)
}

// VerifyTestMain runs the package's tests and fails the run if any
// goroutine outlives them. A package's TestMain calls it.
func VerifyTestMain(m *testing.M, extra ...goleak.Option) {
	goleak.VerifyTestMain(m, Options(extra...)...)
}

// Check fails t if a goroutine started from now on outlives the test and
// its cleanups. Call it first in a test, so that its cleanup runs last.
func Check(t testing.TB, extra ...goleak.Option) {
	t.Helper()
	opts := Options(append([]goleak.Option{goleak.IgnoreCurrent()}, extra...)...)
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}
