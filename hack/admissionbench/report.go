package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kreact/kreact/hack/internal/benchstat"
)

// result is one webhook's figures for one phase.
type result struct {
	rate    float64 // creates per second asked
	repeat  int
	webhook string
	creates int
	reached float64 // creates per second sent
	denied  int
	failed  int // errors other than the check's refusal
	wrong   int // answers that are not the check's
	p50     time.Duration
	p99     time.Duration
	// cpu is the webhook process's CPU seconds during the measured
	// creates; negative without a process (none).
	cpu      float64
	firstErr error
}

// fill sets r's counts and percentiles from the samples of its creates.
func (r *result) fill(samples []sample, elapsed time.Duration) {
	r.creates = len(samples)
	if elapsed > 0 {
		r.reached = float64(len(samples)) / elapsed.Seconds()
	}
	lat := make([]time.Duration, len(samples))
	for i, s := range samples {
		lat[i] = s.latency
		if s.denied {
			r.denied++
		}
		if s.err != nil {
			r.failed++
		}
		if s.wrong {
			r.wrong++
		}
	}
	r.p50, r.p99 = benchstat.Percentile(lat, 50), benchstat.Percentile(lat, 99)
}

// spread is the median, the least and the greatest of some values.
type spread struct {
	med, lo, hi float64
	n           int
}

// spreadOf returns the spread of vs; the median of an even count is the
// mean of the middle two.
func spreadOf(vs []float64) spread {
	if len(vs) == 0 {
		return spread{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

// times formats a spread of ratios: "1.23× (1.10–1.40)".
func (s spread) times() string {
	if s.n == 0 {
		return "–"
	}
	if s.n == 1 {
		return fmt.Sprintf("%.2f×", s.med)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", s.med, s.lo, s.hi)
}

// summary is one rate's figures over the repeats.
type summary struct {
	rate float64
	// p50 and p99 are the medians over the repeats, by webhook.
	p50, p99 map[string]time.Duration
	// The kreact/bare ratios, each taken within one repeat.
	ratioP50, ratioP99, ratioCPU spread
	// target: how many repeats have kreact's p99 at most twice the bare
	// webhook's.
	target int
	// failed and wrong add up every phase's, all webhooks.
	failed, wrong int
}

// maxP99Ratio is the target: kreact's p99 at most twice the bare webhook's.
const maxP99Ratio = 2.0

// summarize gives each rate's summary, in the order the rates first
// appear in results.
func summarize(results []result) []summary {
	type key struct {
		rate    float64
		repeat  int
		webhook string
	}
	by := map[key]result{}
	var rates []float64
	repeats := map[float64][]int{}
	for _, r := range results {
		by[key{r.rate, r.repeat, r.webhook}] = r
		if !slices.Contains(rates, r.rate) {
			rates = append(rates, r.rate)
		}
		if !slices.Contains(repeats[r.rate], r.repeat) {
			repeats[r.rate] = append(repeats[r.rate], r.repeat)
		}
	}
	var out []summary
	for _, rate := range rates {
		s := summary{rate: rate, p50: map[string]time.Duration{}, p99: map[string]time.Duration{}}
		p50s, p99s := map[string][]float64{}, map[string][]float64{}
		var r50, r99, rcpu []float64
		for _, rep := range repeats[rate] {
			for _, w := range []string{"kreact", "bare", "none"} {
				if r, ok := by[key{rate, rep, w}]; ok {
					p50s[w] = append(p50s[w], float64(r.p50))
					p99s[w] = append(p99s[w], float64(r.p99))
					s.failed += r.failed
					s.wrong += r.wrong
				}
			}
			k, okK := by[key{rate, rep, "kreact"}]
			b, okB := by[key{rate, rep, "bare"}]
			if !okK || !okB || b.p50 == 0 || b.p99 == 0 {
				continue
			}
			r50 = append(r50, float64(k.p50)/float64(b.p50))
			r99 = append(r99, float64(k.p99)/float64(b.p99))
			if float64(k.p99)/float64(b.p99) <= maxP99Ratio {
				s.target++
			}
			if b.cpu > 0 {
				rcpu = append(rcpu, k.cpu/b.cpu)
			}
		}
		for w, vs := range p50s {
			s.p50[w] = time.Duration(spreadOf(vs).med)
			s.p99[w] = time.Duration(spreadOf(p99s[w]).med)
		}
		s.ratioP50, s.ratioP99, s.ratioCPU = spreadOf(r50), spreadOf(r99), spreadOf(rcpu)
		out = append(out, s)
	}
	return out
}

// report writes one markdown table: every phase of every webhook.
func report(w io.Writer, results []result) {
	fmt.Fprintln(w, "| rate | repeat | webhook | creates (rate reached) | refused | failed | wrong | p50 | p99 | CPU s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		cpu := "–"
		if r.cpu >= 0 {
			cpu = fmt.Sprintf("%.2f", r.cpu)
		}
		fmt.Fprintf(w, "| %g/s | %d | %s | %d (%.0f/s) | %d | %d | %d | %s | %s | %s |\n",
			r.rate, r.repeat, r.webhook, r.creates, r.reached, r.denied, r.failed, r.wrong, round(r.p50), round(r.p99), cpu)
	}
	for _, r := range results {
		if r.firstErr != nil {
			fmt.Fprintf(w, "\nrepeat %d, %g/s, %s: first failure: %v\n", r.repeat, r.rate, r.webhook, r.firstErr)
		}
	}
}

// summaryReport writes one markdown table: each rate's medians and
// kreact/bare ratios over the repeats, and whether the target is met.
func summaryReport(w io.Writer, sums []summary) {
	fmt.Fprintln(w, "| rate | kreact p50 / p99 | bare p50 / p99 | no webhook p50 / p99 | kreact/bare p50 | kreact/bare p99 | kreact/bare CPU | p99 ≤ 2× bare |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, s := range sums {
		pair := func(webhook string) string {
			p50, ok := s.p50[webhook]
			if !ok {
				return "–"
			}
			return round(p50) + " / " + round(s.p99[webhook])
		}
		target := "–"
		if s.ratioP99.n > 0 {
			target = fmt.Sprintf("%d of %d repeats", s.target, s.ratioP99.n)
		}
		if s.failed > 0 || s.wrong > 0 {
			target += fmt.Sprintf(" (%d failed, %d wrong: see above)", s.failed, s.wrong)
		}
		fmt.Fprintf(w, "| %g/s | %s | %s | %s | %s | %s | %s | %s |\n", s.rate, pair("kreact"), pair("bare"), pair("none"),
			s.ratioP50.times(), s.ratioP99.times(), s.ratioCPU.times(), target)
	}
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// settingsLine describes a run, to print above the tables.
func settingsLine(rates []float64, phase, warmup time.Duration, repeats, workers, cores int, goVersion string) string {
	rs := make([]string, len(rates))
	for i, r := range rates {
		rs[i] = fmt.Sprintf("%g", r)
	}
	return strings.Join([]string{
		fmt.Sprintf("creates/s %s", strings.Join(rs, ", ")),
		fmt.Sprintf("phase %v after %v of warm-up", phase, warmup),
		fmt.Sprintf("%d repeats", repeats),
		"every other ConfigMap without the owner label (refused)",
		fmt.Sprintf("kreact spec.workers %d", workers),
		"failurePolicy Fail, timeout 5s",
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}
