package governor

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkMeterCall is what the governor adds to every script call, as
// scripting's Runtime.Serve makes them: Begin, Enter on the locked
// thread, Leave and End, with no script in between. It is the share of
// BenchmarkScriptVersusGo (package scripting) that this package owns.
func BenchmarkMeterCall(b *testing.B) {
	m := NewMeter(noScript{}, 64<<20, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Begin(time.Now())
		runtime.LockOSThread()
		m.Enter()
		if demoted, _ := m.Leave(false); !demoted {
			runtime.UnlockOSThread()
		}
		m.End()
	}
}
