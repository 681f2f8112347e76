package main

import "testing"

func TestParseLogLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       map[string]string
		ok         bool
	}{
		{name: "plain", line: `time=2026-01-01T00:00:00Z level=INFO msg=started rule=a`, ok: true,
			want: map[string]string{"level": "INFO", "msg": "started", "rule": "a"}},
		{name: "quoted with spaces, = and escapes", line: `level=INFO msg="patch done" origin="finalizer kreact.dev/secret-sync" error="x=\"y\" z"`, ok: true,
			want: map[string]string{"msg": "patch done", "origin": "finalizer kreact.dev/secret-sync", "error": `x="y" z`}},
		{name: "empty value", line: `level=INFO msg=""`, ok: true, want: map[string]string{"msg": ""}},
		{name: "not logfmt", line: `panic: runtime error`},
		{name: "unterminated quote", line: `msg="patch done`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, ok := parseLogLine(c.line)
			if ok != c.ok {
				t.Fatalf("parseLogLine(%q) ok = %v, want %v", c.line, ok, c.ok)
			}
			for k, v := range c.want {
				if got := l.get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// shorten drops the timestamp, the queue and the origin, quoted or not,
// and keeps every other field as written.
func TestShorten(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`time=2026-01-01T00:00:00Z level=INFO msg="patch done" rule=secret-sync origin="finalizer kreact.dev/secret-sync" object="team-a/db creds"`,
			`level=INFO msg="patch done" rule=secret-sync object="team-a/db creds"`},
		{`time=2026-01-01T00:00:00Z level=INFO msg="create done" queue=kreact_rule_a origin=rules/a.yaml:3:1 rule=a`,
			`level=INFO msg="create done" rule=a`},
		{`not a log line`, `not a log line`},
	} {
		if got := shorten(c.line); got != c.want {
			t.Errorf("shorten(%q)\n = %q\nwant %q", c.line, got, c.want)
		}
	}
}

func TestInteresting(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{`time=x level=INFO msg="patch done" rule=a origin="finalizer kreact.dev/a"`, true},
		{`time=x level=INFO msg="copied the secret" rule=secret-sync origin=examples/secret-sync.yaml:30:7`, true},
		{`time=x level=INFO msg="rule started" rule=a source=examples/a.yaml watches=1`, true},
		{`time=x level=INFO msg="watch started" component=dynamicinformer`, false},
		{`time=x level=DEBUG msg="list done" source=client-go v=4`, false},
		{`time=x level=INFO msg="rules loaded" rules=6`, false},
	} {
		if got := interesting(c.line); got != c.want {
			t.Errorf("interesting(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}
