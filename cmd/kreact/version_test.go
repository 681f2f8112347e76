package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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
		var got buildInfo
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

// TestResolveBuild: what -ldflags set wins; without it the Go toolchain's
// stamp, and a tree with changes is never passed off as its commit.
func TestResolveBuild(t *testing.T) {
	stamp := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		name                string
		version, commit     string
		stamp               *debug.BuildInfo
		wantVersion, wantID string
	}{
		{"ldflags", "v0.3.0-2-gabc1234", "abc1234ffff", stamp("v0.0.0-20261129-abc1234", "vcs.revision", "other"), "v0.3.0-2-gabc1234", "abc1234ffff"},
		{"go build in a clone", "", "", stamp("v0.0.0-20261129050106-d88f4aa333a0", "vcs.revision", "d88f4aa", "vcs.modified", "false"), "v0.0.0-20261129050106-d88f4aa333a0", "d88f4aa"},
		{"go build with changes", "", "", stamp("v0.0.0-20261129050106-d88f4aa333a0+dirty", "vcs.revision", "d88f4aa", "vcs.modified", "true"), "v0.0.0-20261129050106-d88f4aa333a0+dirty", "d88f4aa"},
		{"older toolchain with changes", "", "", stamp("(devel)", "vcs.revision", "d88f4aa", "vcs.modified", "true"), "dev-dirty", "d88f4aa"},
		{"no stamp (go run, -buildvcs=false)", "", "", stamp("(devel)"), "dev", "unknown"},
		{"no build info", "", "", nil, "dev", "unknown"},
		{"go install module@version", "", "", stamp("v0.3.0"), "v0.3.0", "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := resolveBuild(c.version, c.commit, c.stamp)
			if got.Version != c.wantVersion || got.Commit != c.wantID || got.GoVersion != runtime.Version() {
				t.Errorf("resolveBuild = %+v, want version %q, commit %q, %s", got, c.wantVersion, c.wantID, runtime.Version())
			}
		})
	}
}
