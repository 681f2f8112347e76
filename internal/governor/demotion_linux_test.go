package governor

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/idleprio"
)

// A call that has used more than DemoteAfter of CPU is moved to the
// idle scheduling policy (or nice 19) by the watchdog's check, from
// another thread; a call that has just started is not.
func TestLongCallIsDemoted(t *testing.T) {
	type report struct {
		loweredBefore, loweredAfter bool
		errs                        []error
		demoted                     bool
		used                        time.Duration
	}
	var ct callThread
	entered, spun, checked := make(chan int), make(chan struct{}), make(chan struct{})
	out := make(chan report)
	go func() {
		// Never unlocked: a demoted thread ends with its goroutine.
		runtime.LockOSThread()
		ct.enter()
		tid := idleprio.ThreadID()
		entered <- tid
		<-checked // the first check, right after the start
		var r report
		var err error
		r.loweredBefore, err = idleprio.Demoted(tid)
		r.errs = append(r.errs, err)
		start, _ := threadCPUTime(tid)
		for cpu := start; cpu-start < 2*DemoteAfter; cpu, _ = threadCPUTime(tid) {
		}
		spun <- struct{}{}
		<-checked
		r.loweredAfter, err = idleprio.Demoted(tid)
		r.errs = append(r.errs, err)
		r.demoted, r.used = ct.leave(true)
		out <- r
	}()
	<-entered
	if demoted, _ := ct.check(false); demoted {
		t.Error("check demoted a call that had just started")
	}
	checked <- struct{}{}
	<-spun
	if demoted, used := ct.check(false); !demoted || used < 2*DemoteAfter {
		t.Errorf("check did not report demoting the call, or the CPU it used (%v)", used)
	}
	if demoted, used := ct.check(false); demoted || used != 0 {
		t.Errorf("a second check reported demoting the call again (%v), or read its CPU (%v)", demoted, used)
	}
	if _, used := ct.check(true); used < 2*DemoteAfter {
		t.Errorf("a check that reads always reported %v of CPU", used)
	}
	checked <- struct{}{}
	r := <-out
	if err := errors.Join(r.errs...); err != nil {
		t.Fatal(err)
	}
	if r.loweredBefore {
		t.Errorf("thread idle right after the call started")
	}
	if !r.loweredAfter {
		t.Errorf("after %v of CPU: the thread runs neither at SCHED_IDLE nor at nice 19", 2*DemoteAfter)
	}
	if !r.demoted {
		t.Error("leave did not report the demotion")
	}
	if r.used < 2*DemoteAfter {
		t.Errorf("leave measured %v of CPU, want at least %v", r.used, 2*DemoteAfter)
	}
}
