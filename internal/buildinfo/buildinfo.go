package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"sigs.k8s.io/yaml"
)

// Build is a build of kreact: what kreact version prints and
// kreact_build_info carries.
type Build struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Current is the build of this binary: version and commit if the build
// set them (-ldflags -X), else those of the Go toolchain's stamp
// (debug.ReadBuildInfo); see Resolve.
func Current(version, commit string) Build {
	stamp, _ := debug.ReadBuildInfo()
	return Resolve(version, commit, stamp)
}

// Resolve prefers what -ldflags set. Without it, the module version
// the toolchain derived from the VCS (Go 1.24 and later: a tag, or a
// pseudo-version, with +dirty), and vcs.revision and vcs.modified: a binary
// built from a changed tree says so, never passes for the commit.
func Resolve(version, commit string, stamp *debug.BuildInfo) Build {
	b := Build{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var revision string
	var modified bool
	if stamp != nil {
		for _, s := range stamp.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
		if stamp != nil && stamp.Main.Version != "" && stamp.Main.Version != "(devel)" {
			b.Version = stamp.Main.Version
		}
		if modified && !strings.Contains(b.Version, "dirty") {
			b.Version += "-dirty"
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
		if revision != "" {
			b.Commit = revision
		}
	}
	return b
}

// Write prints b as kreact version does: output "json" or "yaml", else
// three lines of text.
func (b Build) Write(w io.Writer, output string) error {
	switch output {
	case "json":
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the version: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(b)
		if err != nil {
			return fmt.Errorf("encode the version: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	_, err := fmt.Fprintf(w, "kreact %s\ncommit: %s\ngo: %s %s\n", b.Version, b.Commit, b.GoVersion, b.Platform)
	return err
}
