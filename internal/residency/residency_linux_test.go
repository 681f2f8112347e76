//go:build linux

package residency

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile reads RssFile (kB) of this process.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestTrimExecutableDropsPagesAndKeepsRunning: the test binary's resident
// file pages go down, and code and read-only data still work afterwards
// (they are read back from the file).
func TestTrimExecutableDropsPagesAndKeepsRunning(t *testing.T) {
	before := rssFile(t)
	n, err := TrimExecutable()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	t.Logf("mapped %d bytes; RssFile %d kB -> %d kB", n, before, after)
	if n == 0 {
		t.Fatal("no mapping of the executable was found")
	}
	if after >= before {
		t.Errorf("RssFile went from %d to %d kB", before, after)
	}
	// Code and read-only data the test had not used yet, and used.
	if got := strings.Repeat(strconv.Quote("é"), 2) + strings.ToUpper("ok"); got != `"é""é"OK` {
		t.Errorf("after the trim: %q", got)
	}
}
