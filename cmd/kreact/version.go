package main

import (
	"context"
	"io"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/internal/buildinfo"
)

// version and commit are set by the build (make build, make image, make
// release, the Dockerfile) with
//
//	-ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse HEAD)"
//
// A plain `go build` leaves them empty, and buildinfo.Current falls back
// on what the Go toolchain stamped into the binary.
var version, commit string

// currentBuild is the build of this binary (buildinfo.Current).
func currentBuild() buildinfo.Build { return buildinfo.Current(version, commit) }

func versionCmd(_ context.Context, o *cmdline.VersionOptions, stdout, _ io.Writer) error {
	return currentBuild().Write(stdout, o.Output)
}
