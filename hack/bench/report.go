package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// result is one controller's figures for one phase.
type result struct {
	phase, controller string
	writes            int
	rate              float64 // writes per second reached
	p50, p99          time.Duration
	loadTime          time.Duration // how long the writes took
	drain             time.Duration
	left              int // writes not reacted to when the drain timed out
	patches           int64
	cpu               float64 // seconds during the load and the drain
	rss               int64   // peak, bytes
}

// report writes one markdown table: each phase's kreact and bare rows
// (and kreact-base's, when it ran), then the ratios to bare.
func report(w io.Writer, results []result) {
	fmt.Fprintln(w, "| phase | controller | writes (rate) | p50 | p99 | drain | patches | CPU s | CPU s / 1000 writes | peak RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	byPhase := map[string]map[string]result{}
	var order []string
	for _, r := range results {
		if byPhase[r.phase] == nil {
			byPhase[r.phase] = map[string]result{}
			order = append(order, r.phase)
		}
		byPhase[r.phase][r.controller] = r
		drain := r.drain.Round(10 * time.Millisecond).String()
		if r.left > 0 {
			drain = fmt.Sprintf("not drained: %d left", r.left)
		}
		fmt.Fprintf(w, "| %s | %s | %d (%.0f/s) | %s | %s | %s | %d | %.2f | %.3f | %s |\n",
			r.phase, r.controller, r.writes, r.rate, round(r.p50), round(r.p99), drain, r.patches, r.cpu,
			1000*ratio(r.cpu, float64(r.writes)), mib(r.rss))
	}
	for _, phase := range order {
		// kreact-base (-kreact-base with -controllers …,kreact-base) is
		// a second build measured against the same bare controller.
		for _, name := range []string{"kreact", "kreact-base"} {
			k, okK := byPhase[phase][name]
			b, okB := byPhase[phase]["bare"]
			if !okK || !okB {
				continue
			}
			fmt.Fprintf(w, "| %s | **%s/bare** | | %s | %s | %s | %s | %s | %s | %s |\n", phase, name,
				times(float64(k.p50), float64(b.p50)), times(float64(k.p99), float64(b.p99)),
				times(float64(k.drain), float64(b.drain)), times(float64(k.patches), float64(b.patches)),
				times(k.cpu, b.cpu), times(k.cpu/float64(max(k.writes, 1)), b.cpu/float64(max(b.writes, 1))),
				times(float64(k.rss), float64(b.rss)))
		}
	}
}

func times(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.String()
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// settingsLine describes a run, to print above the table.
func settingsLine(objects, burstObjects, burstUpdates int, phase time.Duration, s settings, cores int, goVersion string) string {
	return strings.Join([]string{
		fmt.Sprintf("objects %d (burst: %d updates over %d)", objects, burstUpdates, burstObjects),
		fmt.Sprintf("phase %v", phase),
		fmt.Sprintf("workers %d", s.workers),
		fmt.Sprintf("client QPS %g burst %d", s.qps, s.burst),
		s.describeFields(),
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}
