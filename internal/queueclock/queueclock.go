package queueclock

import (
	"time"

	"k8s.io/utils/clock"
)

// MinTick is the shortest period of a ticker of a Slow clock.
const MinTick = 5 * time.Second

// Slow returns c, or the real clock if c is nil, with tickers of a period
// of at least MinTick.
func Slow(c clock.WithTicker) clock.WithTicker {
	if c == nil {
		c = clock.RealClock{}
	}
	return slow{c}
}

type slow struct{ clock.WithTicker }

func (s slow) NewTicker(d time.Duration) clock.Ticker {
	return s.WithTicker.NewTicker(max(d, MinTick))
}
