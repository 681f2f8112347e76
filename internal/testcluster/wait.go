package testcluster

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Eventually polls cond until it holds and fails the test if it still does
// not after 90 seconds. The limit only bounds a hung test on a slow shared
// machine: it asserts nothing about speed.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// LogBuffer is an io.Writer that tests read while it is being written: a
// sink for slog handlers and for a command's output. Safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count returns how many lines contain every one of subs.
func (b *LogBuffer) Count(subs ...string) int {
	n := 0
	for line := range strings.SplitSeq(b.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}
