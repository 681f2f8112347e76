package governor

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

// GOMAXPROCS grows at least by doubling the Ps added so far, so that
// calls that start one after another change it (a stop of the world
// each time) only a logarithmic number of times.
func TestScriptProcsGrowByDoubling(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := &scriptProcs{}
	base := runtime.GOMAXPROCS(0)
	changes := 0
	last := base
	for range 9 {
		p.add(1)
		if got := runtime.GOMAXPROCS(0); got != last {
			changes++
			last = got
		}
	}
	if got := runtime.GOMAXPROCS(0); got < base+9 {
		t.Errorf("GOMAXPROCS = %d with 9 calls running, want at least %d", got, base+9)
	}
	if changes != 5 { // 1, 2, 4, 8, 16 Ps added
		t.Errorf("GOMAXPROCS changed %d times for 9 calls, want 5", changes)
	}
}
