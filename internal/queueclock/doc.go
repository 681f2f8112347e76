// Package queueclock gives client-go's workqueues a clock whose tickers
// tick at most every MinTick: the one ticker a workqueue runs, when it has
// a metrics provider, refreshes its unfinished-work gauges every 500 ms.
// kreact runs two queues per rule (its changes and its actions), so a
// thousand idle rules woke up 4,000 times a second for those gauges alone
// (hack/bench's rule-objects phase: about 7% of a core, idle). Prometheus
// reads them every 15 to 30 s; every MinTick is as good.
//
// It guarantees that only tickers are slowed: timers, sleeps and the
// clock's time are the wrapped clock's, so delays, retries and latency
// metrics are unchanged; and a ticker asked for MinTick or more (the
// delaying queue's 10 s heartbeat) is the wrapped clock's own.
package queueclock
