package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
)

// version and commit are set by the build (make build, make image, make
// release, the Dockerfile) with
//
//	-ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse HEAD)"
//
// A plain `go build` leaves them empty, and buildInfo falls back on what
// the Go toolchain stamped into the binary.
var version, commit string

// buildInfo is what kreact version prints and kreact_build_info carries.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// currentBuild is the build of this binary: the values the build set, else
// those of the Go toolchain's stamp (debug.ReadBuildInfo).
func currentBuild() buildInfo {
	stamp, _ := debug.ReadBuildInfo()
	return resolveBuild(version, commit, stamp)
}

// resolveBuild prefers what -ldflags set. Without it, the module version
// the toolchain derived from the VCS (Go 1.24 and later: a tag, or a
// pseudo-version, with +dirty), and vcs.revision and vcs.modified: a binary
// built from a changed tree says so, never passes for the commit.
func resolveBuild(version, commit string, stamp *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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

func versionCmd(_ context.Context, o *cmdline.VersionOptions, stdout, _ io.Writer) error {
	b := currentBuild()
	switch o.Output {
	case "json":
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the version: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(b)
		if err != nil {
			return fmt.Errorf("encode the version: %w", err)
		}
		_, err = stdout.Write(data)
		return err
	}
	_, err := fmt.Fprintf(stdout, "kreact %s\ncommit: %s\ngo: %s %s\n", b.Version, b.Commit, b.GoVersion, b.Platform)
	return err
}
