package queueclock

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestSlowTicksAtMostEveryMinTickAndKeepsTimers(t *testing.T) {
	fake := testingclock.NewFakeClock(time.Unix(0, 0))
	c := Slow(fake)
	tick := c.NewTicker(500 * time.Millisecond)
	timer := c.NewTimer(500 * time.Millisecond)
	fake.Step(time.Second)
	select {
	case <-tick.C():
		t.Fatal("a 500ms ticker ticked after 1s")
	default:
	}
	select {
	case <-timer.C():
	default:
		t.Fatal("a 500ms timer did not fire after 1s")
	}
	fake.Step(MinTick)
	select {
	case <-tick.C():
	default:
		t.Fatal("the ticker did not tick after MinTick")
	}
	if !c.Now().Equal(fake.Now()) {
		t.Error("the clock's time is not the wrapped clock's")
	}
}
