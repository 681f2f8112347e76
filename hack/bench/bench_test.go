package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"", nil, false},
		{"0", nil, false},
		{"10000, 100000", []int{10000, 100000}, false},
		{"10k", nil, true},
		{"-5", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSizes(tt.in)
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Errorf("parseSizes(%q) = %v, %v; want %v (error: %v)", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name        string
		in          []float64
		med, lo, hi float64
	}{
		{"none", nil, 0, 0, 0},
		{"one", []float64{2}, 2, 2, 2},
		{"two", []float64{3, 1}, 2, 1, 3},
		{"three", []float64{0.9, 0.5, 1.4}, 0.9, 0.5, 1.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			med, lo, hi := spread(tt.in)
			if med != tt.med || lo != tt.lo || hi != tt.hi {
				t.Errorf("spread = %v, %v, %v; want %v, %v, %v", med, lo, hi, tt.med, tt.lo, tt.hi)
			}
		})
	}
}

// The ratios pair the two controllers' runs of the same repeat.
func TestSyncReportRatiosPerRepeat(t *testing.T) {
	var b bytes.Buffer
	syncReport(&b, []syncResult{
		{objects: 10, repeat: 0, controller: "kreact", sync: 2 * time.Second, cpuReady: 1, cpuWindow: 1, hwm: 100 << 20, rss: 60 << 20},
		{objects: 10, repeat: 0, controller: "bare", sync: 4 * time.Second, cpuReady: 2, cpuWindow: 2, hwm: 200 << 20, rss: 100 << 20},
		{objects: 10, repeat: 1, controller: "bare", sync: 1 * time.Second, cpuReady: 1, cpuWindow: 1, hwm: 100 << 20, rss: 100 << 20},
		{objects: 10, repeat: 1, controller: "kreact", sync: 1 * time.Second, cpuReady: 2, cpuWindow: 2, hwm: 100 << 20, rss: 30 << 20},
	})
	out := b.String()
	for _, want := range []string{
		"| 10 | kreact/bare, median (min–max) | **0.75×** (0.50–1.00) | **1.25×** (0.50–2.00) | **1.25×** (0.50–2.00) | **0.75×** (0.50–1.00) | **0.45×** (0.30–0.60) | 2 |",
		"| 10 | kreact, median | 1.5 s | 1.50 | 3.00 | 100 MiB | 45 MiB | 2 |",
		"| 10 | 2 | kreact | 1s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestSumMetric(t *testing.T) {
	text := `# HELP kreact_actions_total Attempts
kreact_actions_total{outcome="succeeded",rule="mirror",verb="patch"} 1200
kreact_actions_total{outcome="retrying",rule="mirror",verb="patch"} 3
kreact_actions_total{outcome="succeeded",rule="mirror",verb="delete"} 7
`
	n, err := sumMetric(text, "kreact_actions_total", `verb="patch"`)
	if err != nil || n != 1203 {
		t.Errorf("sumMetric = %d, %v; want 1203", n, err)
	}
}

// A write counts as reacted to when the annotation shows its value or a
// later one.
func TestTrackerCountsCoalescedWrites(t *testing.T) {
	tr := newTracker()
	t0 := time.Unix(0, 0)
	tr.wrote("a", 1, mirrored, t0)
	tr.wrote("a", 2, mirrored, t0.Add(time.Second))
	tr.wrote("a", 3, mirrored, t0.Add(2*time.Second))
	tr.wrote("b", 4, mirrored, t0)
	tr.sawMirror("a", "2", t0.Add(3*time.Second))
	if n := tr.outstanding(); n != 2 {
		t.Fatalf("outstanding = %d, want 2", n)
	}
	tr.sawMirror("a", "not a number", t0)
	tr.failed("b", 4)
	tr.sawMirror("a", "3", t0.Add(4*time.Second))
	if n := tr.outstanding(); n != 0 {
		t.Errorf("outstanding = %d, want 0", n)
	}
	got := tr.takeLatencies()
	want := []time.Duration{3 * time.Second, 2 * time.Second, 2 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("latencies = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("latencies = %v, want %v", got, want)
		}
	}
}

func TestReportHasRatios(t *testing.T) {
	var b bytes.Buffer
	report(&b, []result{
		{phase: "200/s", controller: "kreact", writes: 1000, p50: 4 * time.Millisecond, p99: 20 * time.Millisecond, patches: 1000, cpu: 1.2, rss: 60 << 20},
		{phase: "200/s", controller: "bare", writes: 1000, p50: 2 * time.Millisecond, p99: 10 * time.Millisecond, patches: 1000, cpu: 1.0, rss: 30 << 20, left: 3},
	})
	out := b.String()
	for _, want := range []string{"| 200/s | **kreact/bare** | | 2.00× | 2.00× |", "1.20×", "2.00×", "not drained: 3 left"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// With -kreact-base and -controllers naming kreact-base, the whole-path
// report has that build's ratios to the same bare controller too.
func TestReportHasTheBaseBuild(t *testing.T) {
	var b bytes.Buffer
	report(&b, []result{
		{phase: "40/s", controller: "kreact", writes: 1000, p50: 4 * time.Millisecond, p99: 20 * time.Millisecond, patches: 1000, cpu: 1.2, rss: 60 << 20},
		{phase: "40/s", controller: "bare", writes: 1000, p50: 2 * time.Millisecond, p99: 10 * time.Millisecond, patches: 1000, cpu: 1.0, rss: 30 << 20},
		{phase: "40/s", controller: "kreact-base", writes: 1000, p50: 3 * time.Millisecond, p99: 15 * time.Millisecond, patches: 1000, cpu: 1.5, rss: 45 << 20},
	})
	out := b.String()
	for _, want := range []string{
		"| 40/s | **kreact/bare** | | 2.00× | 2.00× | – | 1.00× | 1.20× | 1.20× | 2.00× |",
		"| 40/s | **kreact-base/bare** | | 1.50× | 1.50× | – | 1.00× | 1.50× | 1.50× | 1.50× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestProfileWritesTheControllersProfile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" || r.URL.Query().Get("seconds") != "30" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("profile bytes"))
	}))
	defer srv.Close()
	c := &controller{name: "bare", pprofAddr: strings.TrimPrefix(srv.URL, "http://")}
	dir := t.TempDir()
	if err := <-c.profile(dir, "200pers-bare", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "200pers-bare-*.pprof"))
	if len(files) != 1 {
		t.Fatalf("profiles written: %v, want one", files)
	}
	if data, _ := os.ReadFile(files[0]); string(data) != "profile bytes" {
		t.Errorf("profile holds %q", data)
	}
	if err := <-c.profile("", "x", time.Second); err != nil {
		t.Errorf("no directory: %v, want nothing done", err)
	}
	c.pprofAddr = "127.0.0.1:1"
	if err := <-c.profile(dir, "x", time.Second); err == nil {
		t.Error("unreachable controller: no error")
	}
}

func TestExplainReport(t *testing.T) {
	var buf bytes.Buffer
	explainReport(&buf, []syncResult{{objects: 10, controller: "bare"}})
	if buf.Len() != 0 {
		t.Errorf("a report without -explain: %q", buf.String())
	}
	explainReport(&buf, []syncResult{
		{objects: 100000, repeat: 0, controller: "kreact", explain: 3*time.Millisecond + 456*time.Microsecond},
		{objects: 100000, repeat: 0, controller: "bare"},
	})
	want := "\n| objects | repeat | kreact explain answer |\n|---|---|---|\n| 100000 | 1 | 3.5ms |\n"
	if buf.String() != want {
		t.Errorf("report:\n%q\nwant\n%q", buf.String(), want)
	}
}

// The status writes are the API server's PATCHes of rules/status, whatever
// their code, and nothing else.
func TestSumMetricAllCountsStatusWrites(t *testing.T) {
	text := `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kreact.dev",resource="rules",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 1000
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kreact.dev",resource="rules",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kreact.dev",resource="rules",scope="resource",subresource="",verb="POST",version="v1alpha1"} 1000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kreact.dev",resource="clusterrules",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 7
`
	n, err := sumMetric(text, "apiserver_request_total", `group="kreact.dev"`, `resource="rules"`, `subresource="status"`, `verb="PATCH"`)
	if err != nil || n != 1002 {
		t.Errorf("sumMetric = %d, %v; want 1002", n, err)
	}
}

// Memory per rule is above each kind's own baseline: files above one
// rule's process (per rule but the first), objects above the same process
// with none; the ratio is taken per repeat.
func TestRuleReportPerRule(t *testing.T) {
	rr := func(rep int, filesRSS, objectsRSS int64) ruleRepeat {
		return ruleRepeat{repeat: rep, n: 11,
			one:     filesRun{rules: 1, rss: 30 << 20, hwm: 50 << 20},
			files:   filesRun{rules: 11, rss: filesRSS, hwm: 60 << 20, ready: time.Second},
			objects: objectsRun{rssEmpty: 30 << 20, hwmEmpty: 50 << 20, rss: objectsRSS, hwm: 61 << 20, loaded: 2 * time.Second, allReady: time.Minute, writesIdle: 3}}
	}
	r0 := rr(0, 30<<20+10<<10*10, 30<<20+20<<10*11)
	if f, o := r0.perRule(true); f != 10<<10 || o != 20<<10 {
		t.Errorf("perRule = %v, %v; want 10 KiB and 20 KiB", f, o)
	}
	var b bytes.Buffer
	ruleReport(&b, &ruleBench{n: 11, window: 30 * time.Second}, []ruleRepeat{r0, rr(1, 30<<20+10<<10*10, 30<<20+40<<10*11)})
	out := b.String()
	for _, want := range []string{
		"| memory per idle rule, steady (VmRSS after the window) | 10.0 KiB (10.0 KiB–10.0 KiB) | 30.0 KiB (20.0 KiB–40.0 KiB) | **3.00×** (2.00–4.00) | 2 |",
		"| to all running (files: start to /readyz; objects: first create to kreact's log of all running) | 1.00 s (1.00 s–1.00 s) | 2.00 s (2.00 s–2.00 s) | **2.00×** (2.00–2.00) | 2 |",
		"| objects: status writes per minute, idle (the window after every status Ready) | – | 6 (6–6) | – | 2 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// The million phase's report scales the bare controller's figures by the
// ratio of the sizes, labels them so, and takes kreact's ratios per
// repeat against them; it says whether every peak fits in 1 GiB.
func TestMillionReportScalesTheBareController(t *testing.T) {
	var b bytes.Buffer
	results := []syncResult{
		{objects: 1000000, repeat: 0, controller: "kreact", sync: 50 * time.Second, cpuReady: 40, hwm: 900 << 20, rss: 600 << 20},
		{objects: 100000, repeat: 0, controller: "bare", sync: 10 * time.Second, cpuReady: 12, hwm: 750 << 20, rss: 700 << 20},
		{objects: 1000000, repeat: 1, controller: "kreact", sync: 60 * time.Second, cpuReady: 50, hwm: 1100 << 20, rss: 650 << 20},
		{objects: 100000, repeat: 1, controller: "bare", sync: 12 * time.Second, cpuReady: 10, hwm: 750 << 20, rss: 700 << 20},
	}
	millionReport(&b, results, []millionSetup{{"bench-million", 1000000, 500 * time.Second}})
	out := b.String()
	for _, want := range []string{
		"| bare, 100000 objects ×10, **scaled** | 110.0 s (100.0 s–120.0 s) |",
		// sync 50/100 and 60/120: both 0.50×; peak 900/7500 and 1100/7500.
		"| kreact / scaled bare, per repeat, median (min–max) | **0.50×** (0.50–0.50) |",
		"**0.13×** (0.12–0.15)",
		"kreact's peak RSS at 1000000 objects: median 1000 MiB, largest 1100 MiB; every repeat ≤ 1 GiB: no",
		"setup: 1000000 ConfigMaps in bench-million created in 8m20s (2000/s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// progress prints its line on every tick, and nothing once stopped.
func TestProgressPrintsUntilStopped(t *testing.T) {
	var mu sync.Mutex
	lines := 0
	stop := progress(time.Millisecond, func(time.Duration) string {
		mu.Lock()
		defer mu.Unlock()
		lines++
		return "  tick"
	})
	for {
		mu.Lock()
		n := lines
		mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	mu.Lock()
	after := lines
	mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if lines != after {
		t.Errorf("progress printed %d lines after stop", lines-after)
	}
}

// With -kreact-base, the report has the second build's medians and its
// own ratios to the bare controller of the same repeats.
func TestSyncReportHasTheBaseBuild(t *testing.T) {
	var b bytes.Buffer
	syncReport(&b, []syncResult{
		{objects: 10, repeat: 0, controller: "kreact-base", sync: 3 * time.Second, cpuReady: 1, hwm: 150 << 20, rss: 80 << 20},
		{objects: 10, repeat: 0, controller: "bare", sync: 4 * time.Second, cpuReady: 2, hwm: 200 << 20, rss: 100 << 20},
		{objects: 10, repeat: 0, controller: "kreact", sync: 2 * time.Second, cpuReady: 1, hwm: 100 << 20, rss: 60 << 20},
	})
	out := b.String()
	for _, want := range []string{
		"| 10 | kreact/bare, median (min–max) | **0.50×** (0.50–0.50) |",
		"| 10 | kreact-base/bare, median (min–max) | **0.75×** (0.75–0.75) |",
		"| 10 | kreact-base, median | 3.0 s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// kreact first, then the base build, then bare.
	if k, base, bare := strings.Index(out, "| 10 | kreact, median"), strings.Index(out, "| 10 | kreact-base, median"), strings.Index(out, "| 10 | bare, median"); k >= base || base >= bare {
		t.Errorf("medians in the wrong order:\n%s", out)
	}
}
