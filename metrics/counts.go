package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// RuleCounts are a rule's counts since kreact started, for the status of
// its rule object: read from the counters /metrics serves, so that the
// two never disagree and counting costs the hot path nothing more.
type RuleCounts struct {
	// Calls are handler calls; Failures those that threw or timed out
	// (retries included); GivenUp the calls that used up their retries.
	Calls, Failures, GivenUp int64
	// LastError is the last failed call's error, and LastErrorAt when
	// it came; empty and zero when none failed.
	LastError   string
	LastErrorAt time.Time
}

// lastError is the last error of a rule's call.
type lastError struct {
	msg string
	at  time.Time
}

// noteError keeps err as rule's last error.
func (r *Recorder) noteError(rule string, err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.lastErrors == nil {
		r.lastErrors = map[string]lastError{}
	}
	r.lastErrors[rule] = lastError{err.Error(), time.Now()}
}

// RuleCounts returns the counts of every rule that made a call.
func (r *Recorder) RuleCounts() map[string]RuleCounts {
	out := map[string]RuleCounts{}
	sum := func(vec *prometheus.CounterVec, add func(c *RuleCounts, v int64)) {
		ch := make(chan prometheus.Metric, 64)
		go func() { vec.Collect(ch); close(ch) }()
		for m := range ch {
			var d dto.Metric
			if m.Write(&d) != nil {
				continue
			}
			for _, l := range d.GetLabel() {
				if l.GetName() == "rule" {
					c := out[l.GetValue()]
					add(&c, int64(d.GetCounter().GetValue()))
					out[l.GetValue()] = c
				}
			}
		}
	}
	sum(r.handlerCalls, func(c *RuleCounts, v int64) { c.Calls += v })
	sum(r.handlerErrors, func(c *RuleCounts, v int64) { c.Failures += v })
	sum(r.handlerGivenUp, func(c *RuleCounts, v int64) { c.GivenUp += v })
	r.errMu.Lock()
	defer r.errMu.Unlock()
	for rule, e := range r.lastErrors {
		c := out[rule]
		c.LastError, c.LastErrorAt = e.msg, e.at
		out[rule] = c
	}
	return out
}
