package governor

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

const (
	// pressureHeadroom is how much the heap may grow between two
	// collections while calls misbehave (see gcPacer). It is what a
	// hostile rule may cost in resident memory on top of the live heap,
	// so it is chosen against the resident-set bound: with the hostile
	// scripts of the engine's memory e2e test, 128 MiB kept the peak at
	// 253–326 MiB above idle in nine runs, 192 MiB at 356–444 in five,
	// and 384 MiB let it reach 600. The good rule's latency beside them
	// was no better with more (five interleaved pairs, 128 against 192
	// MiB).
	pressureHeadroom = 128 << 20
	// pressureLasts is how long pressure stays after the last call that
	// misbehaved: a rule whose calls keep failing rests between them
	// (package delivery), and the collector should not switch back and
	// forth at each rest.
	pressureLasts = 3 * time.Second
	// pacerEvery is how often the pacer follows the live heap while
	// pressure lasts.
	pacerEvery = 100 * time.Millisecond

	gogcMetric     = "/gc/gogc:percent"
	liveHeapMetric = "/gc/heap/live:bytes"
)

// gcPacer spaces out Go's collections while script calls misbehave.
//
// Every collection stops the world twice, and stopping the world waits
// for every running goroutine to reach a safe point, including the
// demoted calls (callThread), whose threads get a CPU only when nobody
// else wants one. Beside the hostile scripts of issue 10 on two busy
// cores, such pauses took 15–36ms, where a quiet process has none over
// 2ms, and every good rule's call waits them out. What made them many
// is Go's pacing: the heap goal is the live heap times (1 + GOGC/100),
// kreact's live heap is a few MiB, and a call allocating towards its
// memory limit started a collection every few MiB, 50 in four seconds.
//
// So from the moment a call is demoted or stopped for memory until
// pressureLasts after the last such call, the pacer raises GOGC so that
// the heap may grow by pressureHeadroom between collections (GOGC stays
// as it was when the live heap is large enough for that already), and
// holds the reclaimer's forced collections back. When pressure ends,
// GOGC returns to its value before, and the reclaimer hands the
// garbage back to the operating system. A memory limit (GOMEMLIMIT, set
// by kreact from its container's) still applies: Go collects earlier
// when the heap nears it. With GOGC off, the pacer does nothing.
//
// Measured with BenchmarkHostileNeighbours on a shared two-core machine
// (docs/design/performance-history.md has the figures): the hostile
// phase had a dozen collections instead of fifty, and the good rule's p99
// came closer to its quiet p99, by less than the machine's noise in some
// batches of runs. What is left of each collection is that it still waits for
// demoted calls: up to 130ms, to stop the world or to scan one's stack.
type gcPacer struct {
	headroom uint64
	lasts    time.Duration
	// ended runs when pressure ends; the process's pacer asks the
	// reclaimer for a reclaim.
	ended func()

	mu sync.Mutex
	// until is when pressure ends unless a call misbehaves again; zero
	// when there is none.
	until time.Time
	// base is GOGC when pressure began; percent is what the pacer set.
	base, percent int
	sample        [2]metrics.Sample
}

// pacer is the process's gcPacer. Like GOGC itself, there is one.
var pacer = newGCPacer(pressureHeadroom, pressureLasts)

// The process's pacer and reclaimer refer to each other, which their
// initialisers cannot.
func init() {
	pacer.ended = reclaim.request
	reclaim.hold = pacer.active
}

func newGCPacer(headroom uint64, lasts time.Duration) *gcPacer {
	return &gcPacer{
		headroom: headroom, lasts: lasts, ended: func() {},
		sample: [2]metrics.Sample{{Name: gogcMetric}, {Name: liveHeapMetric}},
	}
}

// misbehaved starts pressure, or extends it by lasts. The watchdog calls
// it when it demotes a call or stops one for memory.
func (p *gcPacer) misbehaved() {
	p.mu.Lock()
	defer p.mu.Unlock()
	underPressure := !p.until.IsZero()
	if !underPressure {
		gogc, _ := p.read()
		if gogc < 0 {
			return // the collector is off; nothing to space out
		}
		p.base, p.percent = gogc, gogc
		go p.loop()
	}
	p.until = time.Now().Add(p.lasts)
	p.follow()
}

// active reports whether pressure lasts.
func (p *gcPacer) active() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.until.IsZero()
}

// loop follows the live heap while pressure lasts, then ends it.
func (p *gcPacer) loop() {
	t := time.NewTicker(pacerEvery)
	defer t.Stop()
	for range t.C {
		p.mu.Lock()
		if time.Now().Before(p.until) {
			p.follow()
			p.mu.Unlock()
			continue
		}
		p.until = time.Time{}
		debug.SetGCPercent(p.base)
		p.mu.Unlock()
		p.ended()
		return
	}
}

// follow sets GOGC so that the heap may grow by headroom over the live
// heap of the last collection, never below base. It leaves GOGC alone
// while that moves less than a quarter, because setting it takes the
// heap's lock. p.mu must be held.
func (p *gcPacer) follow() {
	_, live := p.read()
	want := max(p.base, int(p.headroom*100/max(live, 1<<20)))
	if want > p.percent*5/4 || want < p.percent*4/5 {
		p.percent = want
		debug.SetGCPercent(want)
	}
}

// read returns GOGC and the live heap of the last collection.
func (p *gcPacer) read() (gogc int, live uint64) {
	metrics.Read(p.sample[:])
	return int(p.sample[0].Value.Uint64()), p.sample[1].Value.Uint64()
}
