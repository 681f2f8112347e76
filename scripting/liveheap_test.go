package scripting

import (
	"runtime"
	"testing"
)

// liveHeapRuntimes is how many runtimes BenchmarkRuntimeLiveHeap keeps at
// once: enough that the collector's own structures and the slice holding
// them are lost in the division.
const liveHeapRuntimes = 100

// BenchmarkRuntimeLiveHeap reports the live heap one idle runtime holds
// (B/runtime-live): liveHeapRuntimes runtimes of benchScript are built and
// kept, and the heap still allocated after a collection, less what it was
// before them, is divided among them. It is what each rule of a process
// adds to the heap its collector paces itself by (GOGC), so the peak RSS
// of many rules grows by about twice it a rule. Live bytes do not depend
// on the load of the machine; goroutine stacks are not counted (each
// runtime's goroutine holds one).
func BenchmarkRuntimeLiveHeap(b *testing.B) {
	p, err := Compile("rule.js", benchScript, CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	h := &benchHost{}
	var total float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		before := heapAlloc()
		b.StartTimer()
		rs := make([]*Runtime, liveHeapRuntimes)
		for i := range rs {
			if rs[i], err = NewRuntime(p, h, RuntimeOptions{Rule: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		total += float64(int64(heapAlloc())-int64(before)) / liveHeapRuntimes
		for _, r := range rs {
			r.Close()
		}
		b.StartTimer()
	}
	b.ReportMetric(total/float64(b.N), "B/runtime-live")
}

// heapAlloc returns the bytes of heap objects allocated and not yet freed.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
