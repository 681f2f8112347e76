package scripting

import (
	"runtime"
	"testing"
)

// TestScriptGoroutinesLeaveProcsFree checks that every call running adds
// a P, so that scripts never hold all of them.
func TestScriptGoroutinesLeaveProcsFree(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := &scriptProcs{}
	base := runtime.GOMAXPROCS(0)
	p.add(1)
	p.add(1)
	if got := runtime.GOMAXPROCS(0); got < base+2 {
		t.Errorf("GOMAXPROCS = %d with 2 calls running, want at least %d", got, base+2)
	}
	p.add(-1)
	p.add(-1)
	if live := p.live.Load(); live != 0 {
		t.Errorf("live = %d, want 0", live)
	}
	p.add(maxExtraProcs + 10)
	if got := runtime.GOMAXPROCS(0); got != base+maxExtraProcs {
		t.Errorf("GOMAXPROCS = %d, want at most %d", got, base+maxExtraProcs)
	}
}
