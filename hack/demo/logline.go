package main

import (
	"strconv"
	"strings"
)

// field is one key=value of a kreact log line in slog's text format, as
// it was written (raw) and decoded (value).
type field struct {
	key, value, raw string
}

// logLine is a log line of kreact's text format split into its fields.
type logLine []field

// parseLogLine splits a line that slog's TextHandler wrote into its
// fields. Values (and keys) that needed quoting are Go-quoted strings,
// which may hold spaces, '=' and escaped quotes, so the line cannot be
// split on spaces. A line that is not key=value pairs throughout returns
// false.
func parseLogLine(line string) (logLine, bool) {
	var l logLine
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimLeft(rest, " ") {
		start := rest
		key, after, ok := token(rest, true)
		if !ok || !strings.HasPrefix(after, "=") {
			return nil, false
		}
		value, after, ok := token(after[1:], false)
		if !ok || (after != "" && after[0] != ' ') {
			return nil, false
		}
		l = append(l, field{key: key, value: value, raw: start[:len(start)-len(after)]})
		rest = after
	}
	return l, len(l) > 0
}

// token reads a key (up to '=') or a value (up to ' ') from the start of
// s, unquoting it if it is quoted, and returns the rest of s.
func token(s string, key bool) (string, string, bool) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", false
		}
		v, err := strconv.Unquote(q)
		return v, s[len(q):], err == nil
	}
	end := " "
	if key {
		end = "= "
	}
	i := strings.IndexAny(s, end)
	if i < 0 {
		i = len(s)
	}
	return s[:i], s[i:], !key || i > 0
}

// get returns the decoded value of key, or "".
func (l logLine) get(key string) string {
	for _, f := range l {
		if f.key == key {
			return f.value
		}
	}
	return ""
}

// without returns the line as written, less the fields drop chooses.
func (l logLine) without(drop func(f field) bool) string {
	var kept []string
	for _, f := range l {
		if !drop(f) {
			kept = append(kept, f.raw)
		}
	}
	return strings.Join(kept, " ")
}
