package buildinfo

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestResolve: what -ldflags set wins; without it the Go toolchain's
// stamp, and a tree with changes is never passed off as its commit.
func TestResolve(t *testing.T) {
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
			got := Resolve(c.version, c.commit, c.stamp)
			if got.Version != c.wantVersion || got.Commit != c.wantID || got.GoVersion != runtime.Version() {
				t.Errorf("Resolve = %+v, want version %q, commit %q, %s", got, c.wantVersion, c.wantID, runtime.Version())
			}
		})
	}
}

// TestWrite: the text of kreact version, and JSON and YAML that read back
// as the same build.
func TestWrite(t *testing.T) {
	b := Build{Version: "v1.2.3", Commit: "abc", GoVersion: "go1.26.0", Platform: "linux/arm64"}
	var text strings.Builder
	if err := b.Write(&text, ""); err != nil || text.String() != "kreact v1.2.3\ncommit: abc\ngo: go1.26.0 linux/arm64\n" {
		t.Errorf("Write text = %q, %v", text.String(), err)
	}
	for _, c := range []struct {
		format    string
		unmarshal func([]byte, any) error
	}{{"json", json.Unmarshal}, {"yaml", func(d []byte, v any) error { return yaml.UnmarshalStrict(d, v) }}} {
		var out strings.Builder
		var got Build
		if err := b.Write(&out, c.format); err != nil {
			t.Fatal(err)
		}
		if err := c.unmarshal([]byte(out.String()), &got); err != nil || got != b {
			t.Errorf("Write %s = %s, reads back as %+v, %v", c.format, out.String(), got, err)
		}
	}
}
