package diag

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLog: every problem of what Load returns (a join of
// lists, with the rule in each position) is a log record of its own,
// with the rule as an attribute when it is known; the message is the
// problem as validate prints it, never split out of a longer text.
func TestLog(t *testing.T) {
	var a, b ErrorList
	a.Add(Position{Rule: "one", File: "r.yaml", Line: 3, Col: 5}, "rule \"one\": script: Unexpected token")
	a.Add(Position{Rule: "one", File: "r.yaml", Line: 7, Col: 1}, "second")
	b.Add(Position{File: "s.yaml", Line: 1, Col: 1}, "unknown field \"x\"")
	err := errors.Join(a, errors.New("a plain error"), b)

	var buf bytes.Buffer
	Log(slog.New(slog.NewJSONHandler(&buf, nil)), "not running", err)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		rule, _ := rec["rule"].(string)
		got = append(got, rule+"|"+rec["error"].(string))
	}
	want := []string{
		`one|r.yaml:3:5: rule "one": script: Unexpected token`,
		"one|r.yaml:7:1: second",
		"|a plain error",
		`|s.yaml:1:1: unknown field "x"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
