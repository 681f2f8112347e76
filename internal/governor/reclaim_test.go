package governor

import (
	"testing"
	"time"
)

// TestReclaimerServesRequestsTogether checks that requests made while a
// reclaim is scheduled are served by it: many requests at once cause one
// reclaim, or two if the first had started before the others came.
func TestReclaimerServesRequestsTogether(t *testing.T) {
	freed := make(chan struct{}, 10)
	r := &reclaimer{free: func() { freed <- struct{}{} }}
	for range 10 {
		r.request()
	}
	<-freed
	// The loop ends once no request is pending.
	for {
		r.mu.Lock()
		running := r.running
		r.mu.Unlock()
		if !running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := 1 + len(freed); n > 2 {
		t.Errorf("10 requests at once caused %d reclaims, want 1 or 2", n)
	}
	// A request afterwards causes one more.
	r.request()
	<-freed
}
