package leaktest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/kreact/kreact/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// A goroutine that ends before the test does is not a leak; one that is
// still running is found by goleak with the shared options.
func TestOptionsFindALiveGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-stop
	}()
	if err := goleak.Find(leaktest.Options(before)...); err == nil {
		t.Error("a running goroutine was not found")
	}
	close(stop)
	<-done
	if err := goleak.Find(leaktest.Options(before)...); err != nil {
		t.Errorf("after it ended: %v", err)
	}
}
