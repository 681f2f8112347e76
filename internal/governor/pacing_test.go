package governor

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

func currentGOGC() int { return int(readMetric(gogcMetric)) }

// waitForQuietPacer waits until the process's pacer, which earlier tests'
// hostile calls may have started, has given GOGC back.
func waitForQuietPacer(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * pressureLasts)
	for pacer.active() {
		if time.Now().After(deadline) {
			t.Fatal("the process's pacer is still active")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// churn allocates n bytes of garbage in small pieces.
var sink []byte

func churn(n int) {
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
}

// While calls misbehave, the heap may grow by the headroom between two
// collections; when pressure ends, GOGC is what it was before, and the
// pacer says so.
func TestPacerSpacesCollectionsWhileCallsMisbehave(t *testing.T) {
	waitForQuietPacer(t)
	base := currentGOGC()
	defer debug.SetGCPercent(base)
	ended := make(chan struct{}, 1)
	// Pressure lasts an hour, ended below by hand: a churn slower than
	// the pressure (a loaded machine, -race) made collections resume
	// half-way through it.
	p := newGCPacer(256<<20, time.Hour)
	p.ended = func() { ended <- struct{}{} }

	p.misbehaved()
	if !p.active() {
		t.Fatal("no pressure after a call misbehaved")
	}
	if got := currentGOGC(); got <= base || got != p.percent {
		t.Errorf("GOGC = %d under pressure (pacer set %d), want more than %d", got, p.percent, base)
	}
	// A quarter of the headroom in garbage: without the pacer, a test
	// process's live heap of a few MiB would be collected many times.
	before := readMetric("/gc/cycles/total:gc-cycles")
	churn(64 << 20)
	if cycles := readMetric("/gc/cycles/total:gc-cycles") - before; cycles > 1 {
		t.Errorf("%d collections while 64 MiB were allocated under pressure, want at most 1", cycles)
	}

	p.mu.Lock()
	p.until = time.Now()
	p.mu.Unlock()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("pressure did not end")
	}
	if p.active() {
		t.Error("pacer active after it ended")
	}
	if got := currentGOGC(); got != base {
		t.Errorf("GOGC = %d after pressure, want %d as before", got, base)
	}
}

// Each misbehaving call moves the end of pressure to lasts after it.
func TestPacerPressureLastsAfterTheLastMisbehaviour(t *testing.T) {
	waitForQuietPacer(t)
	defer debug.SetGCPercent(currentGOGC())
	p := newGCPacer(64<<20, time.Hour)
	ended := make(chan struct{}, 1)
	p.ended = func() { ended <- struct{}{} }
	p.misbehaved()
	first := p.until
	time.Sleep(time.Millisecond)
	p.misbehaved()
	if !p.until.After(first) {
		t.Errorf("pressure ends at %v after a second misbehaviour, want later than %v", p.until, first)
	}
	// End it now rather than in an hour.
	p.mu.Lock()
	p.until = time.Now()
	p.mu.Unlock()
	<-ended
}

// With the collector off, there are no collections to space out, and the
// pacer leaves GOGC off.
func TestPacerLeavesCollectorOff(t *testing.T) {
	waitForQuietPacer(t)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	p := newGCPacer(64<<20, time.Hour)
	p.misbehaved()
	if p.active() {
		t.Error("pressure with GOGC off")
	}
	if got := currentGOGC(); got != -1 {
		t.Errorf("GOGC = %d, want -1 (off)", got)
	}
}

// A reclaimer that is held keeps its request until it is asked again.
func TestReclaimerWaitsWhileHeld(t *testing.T) {
	var held atomic.Bool
	held.Store(true)
	freed := make(chan struct{}, 10)
	r := &reclaimer{free: func() { freed <- struct{}{} }, hold: held.Load}
	r.request()
	for {
		r.mu.Lock()
		running, pending := r.running, r.pending
		r.mu.Unlock()
		if !running {
			if !pending {
				t.Fatal("a held reclaimer dropped its request")
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-freed:
		t.Fatal("a held reclaimer reclaimed")
	default:
	}
	held.Store(false)
	r.request()
	<-freed
}

// In the process, a call stopped for memory starts pressure, and the
// reclaim it asks for comes when pressure ends.
func TestMemoryStopReclaimsAfterPressure(t *testing.T) {
	waitForQuietPacer(t)
	freed := make(chan struct{}, 10)
	reclaim.mu.Lock()
	free := reclaim.free
	reclaim.free = func() { freed <- struct{}{} }
	reclaim.mu.Unlock()
	defer func() {
		reclaim.mu.Lock()
		reclaim.free = free
		reclaim.mu.Unlock()
	}()

	// A hostile call takes new memory page by page until the watchdog
	// stops it; 256 MiB, far past its limit, ends it if it never does.
	const limit = 8 << 20
	hog := NewMeter(noScript{}, limit, nil)
	call(hog, func() {
		var keep [][]byte
		for n := 0; len(hog.Tripped()) == 0 && n < 256<<20; n += 64 << 10 {
			b := make([]byte, 64<<10)
			for i := 0; i < len(b); i += 4 << 10 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		runtime.KeepAlive(keep)
	})
	var err error
	select {
	case err = <-hog.Tripped():
	default:
	}
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("hostile call = %v, want a memory limit error", err)
	}
	// What a runtime does once it dropped the call's values.
	Reclaim()
	if !pacer.active() {
		t.Fatal("no pressure after a call was stopped for memory")
	}
	select {
	case <-freed:
		if pacer.active() {
			t.Error("reclaimed while pressure lasted")
		}
	case <-time.After(5 * pressureLasts):
		t.Fatal("no reclaim after pressure ended")
	}
}
