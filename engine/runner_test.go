package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
)

// calls is a delivery.Observer that counts handler calls.
type calls struct{ n int }

func (c *calls) Event(string, string, event.Type) {}
func (c *calls) HandlerCall(string, event.Type, time.Duration, error) {
	c.n++
}
func (c *calls) HandlerGivenUp(string, event.Type, error) {}
func (c *calls) ChangesDropped(string, int)               {}

func TestCallFailedIsToldOfFailedCallsOnly(t *testing.T) {
	var failed []string
	tell := func(rule string, err error) { failed = append(failed, rule+": "+err.Error()) }
	var metrics calls
	for _, o := range []callFailed{{Observer: &metrics, failed: tell}, {failed: tell}} {
		o.Event("r", "configmaps", event.Add)
		o.HandlerCall("r", event.Add, time.Millisecond, nil)
		o.HandlerCall("r", event.Update, time.Millisecond, errors.New("boom"))
		o.HandlerGivenUp("r", event.Update, errors.New("boom"))
		o.ChangesDropped("r", 1)
	}
	if len(failed) != 2 || failed[0] != "r: boom" || failed[1] != "r: boom" {
		t.Errorf("CallFailed told %q; want the failed call once per observer", failed)
	}
	if metrics.n != 2 {
		t.Errorf("the metrics observer saw %d calls; want 2", metrics.n)
	}
}
