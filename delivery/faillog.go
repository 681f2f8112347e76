package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kreact/kreact/event"
)

// failureLogEvery is how often a failure that repeats (same log message,
// kind of error and script position, or same error when the script has no
// position) is logged: its first occurrence in full, then at most one line
// per period counting the occurrences since, and a last one when the Core
// stops (Run). A rule that fails on every object would otherwise log a
// line per call and per retry: hundreds a second on a busy cluster.
const failureLogEvery = 10 * time.Second

// failureKey is what makes two failures the same for the log: the line's
// level and message, the kind of error (failureKind), and where the
// script failed, or its error when that is not known. The position, not
// the message: a script's messages often name the object ("boom on
// cm-0"), and one throw failing on every object is one failure to the
// reader. The kind too: a call that runs out of memory at the line where
// it usually times out is news, not a repeat.
type failureKey struct {
	level           slog.Level
	msg             string
	kind            string
	position, cause string
}

// failureKind names the kind of a failed call's error, for failureKey:
// what stopped a script (a timeout, its memory or CPU limit), an
// exception it threw (or a host error it did not catch), or "" for an
// error that is not a script's.
func failureKind(err error) string {
	var se *event.ScriptError
	switch {
	case !errors.As(err, &se):
		return ""
	case se.Memory:
		return "memory limit"
	case se.CPULimit:
		return "cpu limit"
	case se.Timeout:
		return "timeout"
	case errors.Is(se.Err, event.ErrStuck):
		return "stuck"
	}
	return "thrown"
}

// failureCount is what the log knows of one failure.
type failureCount struct {
	// logged is when the failure was last logged, in full or counted.
	logged time.Time
	// since counts the occurrences not logged since then; attrs are the
	// attributes of the latest of them.
	since int
	attrs []any
}

// failureLog rate-limits the log lines of a Core's failed calls, per
// failureKey. It is safe for concurrent use.
type failureLog struct {
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	seen map[failureKey]*failureCount
}

func newFailureLog(log *slog.Logger, now func() time.Time) *failureLog {
	return &failureLog{log: log, now: now, seen: map[failureKey]*failureCount{}}
}

// failureKeyOf returns the key of a failed call's line.
func failureKeyOf(level slog.Level, msg string, err error) failureKey {
	k := failureKey{level: level, msg: msg, kind: failureKind(err)}
	var se *event.ScriptError
	switch {
	case errors.As(err, &se) && se.Position.IsValid():
		k.position = se.Position.String()
	case se != nil:
		k.cause = se.Message
	case err != nil:
		k.cause = err.Error()
	}
	return k
}

// failed logs a failure with attrs, unless the same failure was logged
// less than failureLogEvery ago: then it only counts it, and the next
// line for it (a later occurrence, or flush) says how many occurrences it
// stands for (repeated=N).
func (f *failureLog) failed(level slog.Level, msg string, err error, attrs []any) {
	k := failureKeyOf(level, msg, err)
	now := f.now()
	f.mu.Lock()
	c := f.seen[k]
	switch {
	case c == nil:
		f.seen[k] = &failureCount{logged: now}
	case now.Sub(c.logged) < failureLogEvery:
		c.since++
		c.attrs = attrs
		f.mu.Unlock()
		return
	default:
		if c.since > 0 {
			attrs = append(attrs, "repeated", c.since+1, "over", over(now.Sub(c.logged)))
		}
		c.logged, c.since, c.attrs = now, 0, nil
	}
	f.mu.Unlock()
	f.log.Log(context.Background(), level, msg, attrs...)
}

// flush logs the failures counted and not logged for failureLogEvery,
// and forgets those that have not occurred for that long.
func (f *failureLog) flush() { f.flushOlder(failureLogEvery) }

// flushAll logs every failure counted and not logged yet, however
// recently the failure was last logged: the last lines of a Core that
// stops, whose counts would otherwise be lost.
func (f *failureLog) flushAll() { f.flushOlder(0) }

// flushOlder logs the failures counted and not logged for age or longer,
// and forgets those that have not occurred for that long.
func (f *failureLog) flushOlder(age time.Duration) {
	now := f.now()
	type line struct {
		k     failureKey
		attrs []any
	}
	var lines []line
	f.mu.Lock()
	for k, c := range f.seen {
		if now.Sub(c.logged) < age {
			continue
		}
		if c.since == 0 {
			delete(f.seen, k)
			continue
		}
		lines = append(lines, line{k, append(c.attrs, "repeated", c.since, "over", over(now.Sub(c.logged)))})
		c.logged, c.since, c.attrs = now, 0, nil
	}
	f.mu.Unlock()
	for _, l := range lines {
		f.log.Log(context.Background(), l.k.level, l.k.msg, l.attrs...)
	}
}

// over formats the period a repeated=N count stands for: to the second,
// or to the millisecond under one (a Core that stops soon after a failure).
func over(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// flushFailures runs the failure log's flush every failureLogEvery until
// ctx ends; Run calls it, and flushes the rest once its workers have
// stopped.
func (d *Core) flushFailures(ctx context.Context) {
	t := d.clock.NewTicker(failureLogEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			d.failures.flush()
		}
	}
}
