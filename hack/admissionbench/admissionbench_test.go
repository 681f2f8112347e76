package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func ms(ns ...float64) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n * float64(time.Millisecond))
	}
	return out
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want spread
		text string
	}{
		{"none", nil, spread{}, "–"},
		{"one", []float64{1.5}, spread{1.5, 1.5, 1.5, 1}, "1.50×"},
		{"odd", []float64{1.4, 1.1, 1.2}, spread{1.2, 1.1, 1.4, 3}, "1.20× (1.10–1.40)"},
		{"even: the mean of the middle two", []float64{4, 1, 2, 3}, spread{2.5, 1, 4, 4}, "2.50× (1.00–4.00)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := spreadOf(tt.in)
			if got != tt.want {
				t.Errorf("spreadOf = %+v, want %+v", got, tt.want)
			}
			if got.times() != tt.text {
				t.Errorf("times = %q, want %q", got.times(), tt.text)
			}
		})
	}
}

func TestFill(t *testing.T) {
	var r result
	r.fill([]sample{
		{latency: 2 * time.Millisecond},
		{latency: 4 * time.Millisecond, denied: true},
		{latency: 3 * time.Millisecond, err: errors.New("timeout")},
		{latency: 1 * time.Millisecond, denied: true, wrong: true},
	}, 2*time.Second)
	if r.creates != 4 || r.reached != 2 || r.denied != 2 || r.failed != 1 || r.wrong != 1 {
		t.Errorf("counts: %+v", r)
	}
	if r.p50 != 2*time.Millisecond || r.p99 != 4*time.Millisecond {
		t.Errorf("p50 %v, p99 %v; want 2ms, 4ms", r.p50, r.p99)
	}
}

func TestSummarize(t *testing.T) {
	res := func(rate float64, repeat int, webhook string, p50, p99 float64, cpu float64) result {
		return result{rate: rate, repeat: repeat, webhook: webhook, p50: ms(p50)[0], p99: ms(p99)[0], cpu: cpu}
	}
	results := []result{
		res(50, 1, "kreact", 6, 12, 2), res(50, 1, "bare", 4, 10, 1), res(50, 1, "none", 3, 8, -1),
		res(200, 1, "bare", 5, 10, 2), res(200, 1, "kreact", 5, 25, 3),
		res(50, 2, "bare", 4, 8, 1), res(50, 2, "kreact", 4, 12, 3), res(50, 2, "none", 3, 6, -1),
		res(200, 2, "kreact", 6, 15, 4), res(200, 2, "bare", 6, 10, 2),
		res(50, 3, "kreact", 5, 10, 2), res(50, 3, "bare", 5, 10, 2), res(50, 3, "none", 4, 7, -1),
		res(200, 3, "bare", 5, 10, 2), res(200, 3, "kreact", 5, 18, 2),
	}
	results[4].failed, results[4].wrong = 1, 2
	sums := summarize(results)
	if len(sums) != 2 || sums[0].rate != 50 || sums[1].rate != 200 {
		t.Fatalf("rates: %+v", sums)
	}
	s := sums[0]
	if s.p50["kreact"] != 5*time.Millisecond || s.p99["kreact"] != 12*time.Millisecond ||
		s.p50["bare"] != 4*time.Millisecond || s.p99["none"] != 7*time.Millisecond {
		t.Errorf("50/s medians: p50 %v, p99 %v", s.p50, s.p99)
	}
	// p99 ratios 1.2, 1.5, 1.0; CPU 2, 3, 1.
	if s.ratioP99 != (spread{1.2, 1.0, 1.5, 3}) || s.ratioCPU != (spread{2, 1, 3, 3}) || s.target != 3 {
		t.Errorf("50/s ratios: p99 %+v, CPU %+v, target %d", s.ratioP99, s.ratioCPU, s.target)
	}
	s = sums[1]
	// p99 ratios 2.5, 1.5, 1.8: two repeats of three meet the target.
	if s.ratioP99 != (spread{1.8, 1.5, 2.5, 3}) || s.target != 2 || s.failed != 1 || s.wrong != 2 {
		t.Errorf("200/s: p99 %+v, target %d, failed %d, wrong %d", s.ratioP99, s.target, s.failed, s.wrong)
	}
	if _, ok := s.p50["none"]; ok {
		t.Errorf("200/s has a none median without a none phase")
	}

	var out bytes.Buffer
	summaryReport(&out, sums)
	want := `| rate | kreact p50 / p99 | bare p50 / p99 | no webhook p50 / p99 | kreact/bare p50 | kreact/bare p99 | kreact/bare CPU | p99 ≤ 2× bare |
|---|---|---|---|---|---|---|---|
| 50/s | 5ms / 12ms | 4ms / 10ms | 3ms / 7ms | 1.00× (1.00–1.50) | 1.20× (1.00–1.50) | 2.00× (1.00–3.00) | 3 of 3 repeats |
| 200/s | 5ms / 18ms | 5ms / 10ms | – | 1.00× (1.00–1.00) | 1.80× (1.50–2.50) | 1.50× (1.00–2.00) | 2 of 3 repeats (1 failed, 2 wrong: see above) |
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestReport(t *testing.T) {
	var out bytes.Buffer
	report(&out, []result{
		{rate: 50, repeat: 1, webhook: "kreact", creates: 1000, reached: 49.96, denied: 500, p50: 5123 * time.Microsecond, p99: 1234567 * time.Microsecond, cpu: 1.234},
		{rate: 50, repeat: 1, webhook: "none", creates: 1000, reached: 50, p50: 800 * time.Microsecond, p99: 2 * time.Millisecond, cpu: -1,
			failed: 1, firstErr: errors.New("etcd timeout")},
	})
	want := `| rate | repeat | webhook | creates (rate reached) | refused | failed | wrong | p50 | p99 | CPU s |
|---|---|---|---|---|---|---|---|---|---|
| 50/s | 1 | kreact | 1000 (50/s) | 500 | 0 | 0 | 5.1ms | 1.23s | 1.23 |
| 50/s | 1 | none | 1000 (50/s) | 0 | 1 | 0 | 800µs | 2ms | – |

repeat 1, 50/s, none: first failure: etcd timeout
`
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestParseRates(t *testing.T) {
	got, err := parseRates(" 50, 200 ,")
	if err != nil || len(got) != 2 || got[0] != 50 || got[1] != 200 {
		t.Errorf("parseRates = %v, %v", got, err)
	}
	for _, bad := range []string{"", "fast", "0", "-5"} {
		if _, err := parseRates(bad); err == nil {
			t.Errorf("parseRates(%q) accepted", bad)
		}
	}
}

// TestBareCheck: the bare webhook refuses a ConfigMap without the owner
// label, with its message, and allows one with it.
func TestBareCheck(t *testing.T) {
	tests := []struct {
		name    string
		object  string
		allowed bool
		message string
	}{
		{"labelled", `{"metadata":{"name":"a","labels":{"owner":"team-a"}}}`, true, ""},
		{"no labels", `{"metadata":{"name":"a"}}`, false, bareDenial},
		{"an empty owner", `{"metadata":{"labels":{"owner":""}}}`, false, bareDenial},
		{"not an object", `[1]`, false, "bare: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := check(&admissionv1.AdmissionRequest{UID: "u1", Object: runtime.RawExtension{Raw: []byte(tt.object)}})
			if resp.UID != "u1" || resp.Allowed != tt.allowed {
				t.Errorf("response %+v, want allowed %v", resp, tt.allowed)
			}
			if tt.message != "" && (resp.Result == nil || !strings.HasPrefix(resp.Result.Message, tt.message)) {
				t.Errorf("result %+v, want a message starting %q", resp.Result, tt.message)
			}
		})
	}
}

func TestReadServing(t *testing.T) {
	ca, err := readServing(strings.NewReader("ca UEVN\nserving\n"))
	if err != nil || string(ca) != "PEM" {
		t.Errorf("readServing = %q, %v", ca, err)
	}
	if _, err := readServing(strings.NewReader("serving\n")); err == nil {
		t.Error("readServing accepted serving before a CA")
	}
	if _, err := readServing(strings.NewReader("ca UEVN\n")); err == nil {
		t.Error("readServing accepted an exit before serving")
	}
}
