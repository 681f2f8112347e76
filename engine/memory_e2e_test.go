//go:build e2e

package engine_test

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
)

// procStatusKiB reads a field of /proc/self/status, in KiB.
func procStatusKiB(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// hogRule is a rule whose onAdd runs body on every ConfigMap of ns.
func hogRule(name, ns, timeout, body string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  events: [add]
  timeout: %s
  retries: 1
  script: |
    function onAdd(obj, ctx) {
      %s
    }
`, name, ns, timeout, body)
}

// Rules that try to take the process's memory, each beside a rule that
// labels every new ConfigMap: the good rule labels them all, each hostile
// call fails for the memory limit, and the resident set (from /proc: the
// engine runs in this process) stays bounded. Without the limit the
// doubling string alone, with its 10 s timeout, would take all memory.
//
// The bound is 1 GiB above idle, not the 512 MiB the issue aims at: four
// of these calls allocate at once, each to 64 MiB and past it until the
// watchdog's next reading, and on a loaded two-core machine readings come
// late (see scripting.allocWatch). Measured peaks there: 400-650 MiB.
func TestHostileMemoryRulesAreStopped(t *testing.T) {
	const ns, n = "hog", 20
	obs := &givenUpCounter{n: make(chan string, 4*n)}
	h := start(t, engine.Options{Observer: obs})
	h.namespace(ns)
	hogs := map[string]string{
		"push-loop":   `const a = []; for (;;) a.push([a.length]);`,
		"doubling":    `let s = "x"; for (;;) s += s;`,
		"fill":        `Array(1e9).fill(0);`,
		"repeat":      `"x".repeat(1 << 30);`,
		"json-parse":  `const keep = []; const t = "[" + "{\"a\":1},".repeat(1000) + "0]"; for (;;) keep.push(JSON.parse(t));`,
		"concat-loop": `let s = ""; for (;;) s += "abcdefgh" + s.length;`,
	}
	yaml := labelRule("good", ns, "good", "yes")
	for name, body := range hogs {
		yaml += "---\n" + hogRule(name, ns, "10s", body)
	}
	idle := procStatusKiB(t, "VmRSS")
	// What kreact run sets from a container's memory limit (GOMEMLIMIT):
	// here, as if the container allowed 400 MiB above idle.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit((idle << 10) + 400<<20))
	h.mustLoad(yaml)
	for i := range n {
		h.configMap(ns, fmt.Sprintf("cm-%02d", i), nil, nil)
	}
	for i := range n {
		name := fmt.Sprintf("cm-%02d", i)
		testcluster.Eventually(t, name+" labelled by the good rule", func() bool { v, _ := h.label(ns, name, "good"); return v == "yes" })
	}
	givenUp := map[string]int{}
	deadline := time.After(2 * time.Minute)
	for len(givenUp) < len(hogs) || sum(givenUp) < len(hogs)*n {
		select {
		case msg := <-obs.n:
			rule, cause, _ := strings.Cut(msg, ": ")
			if _, ok := hogs[rule]; !ok {
				t.Errorf("rule %s given up: %s", rule, cause)
				continue
			}
			if !strings.Contains(cause, "memory limit") {
				t.Errorf("rule %s given up for another cause: %s", rule, cause)
			}
			givenUp[rule]++
		case <-deadline:
			t.Fatalf("given up after 2 minutes: %v, want %d calls of each of %d rules", givenUp, n, len(hogs))
		}
	}
	peak := procStatusKiB(t, "VmHWM")
	t.Logf("idle RSS %d MiB, peak %d MiB", idle>>10, peak>>10)
	if peak-idle > 1<<20 {
		t.Errorf("peak RSS %d MiB is %d MiB above the idle %d MiB, want at most 1 GiB", peak>>10, (peak-idle)>>10, idle>>10)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
