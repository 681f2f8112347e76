package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/internal/buildinfo"
)

// TestVersionCommand: kreact version, --version and -o json|yaml print the
// same build: this binary's Go version and platform, and a version and
// commit that are never empty.
func TestVersionCommand(t *testing.T) {
	want := currentBuild()
	if want.Version == "" || want.Commit == "" {
		t.Fatalf("currentBuild() = %+v, want a version and a commit", want)
	}
	text := "kreact " + want.Version + "\ncommit: " + want.Commit + "\ngo: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, stdout, stderr := run(t, args...); code != exitOK || stdout != text || stderr != "" {
			t.Errorf("kreact %s: %s, want:\n%s", strings.Join(args, " "), transcript(code, stdout, stderr), text)
		}
	}
	for _, c := range []struct {
		format    string
		unmarshal func([]byte, any) error
	}{{"json", json.Unmarshal}, {"yaml", func(b []byte, v any) error { return yaml.UnmarshalStrict(b, v) }}} {
		code, stdout, stderr := run(t, "version", "-o", c.format)
		var got buildinfo.Build
		if err := c.unmarshal([]byte(stdout), &got); err != nil || code != exitOK || stderr != "" {
			t.Errorf("kreact version -o %s: %v; %s", c.format, err, transcript(code, stdout, stderr))
		}
		if got != want {
			t.Errorf("kreact version -o %s = %+v, want %+v", c.format, got, want)
		}
	}
	if code, stdout, stderr := run(t, "version", "-o", "table"); code != exitUsage || !strings.Contains(stderr, "want yaml or json") {
		t.Errorf("kreact version -o table: %s", transcript(code, stdout, stderr))
	}
}
