package main

import (
	"github.com/kreact/kreact/internal/cmdline"
)

// The flag machinery is package cmdline's; the commands here say only
// which flags they have.
type (
	flagSet      = cmdline.FlagSet
	clusterFlags = cmdline.ClusterFlags
	logFlags     = cmdline.LogFlags
)

var newFlagSet = cmdline.NewFlagSet

// userAgent is what kreact's requests to the API server send.
func userAgent() string { return "kreact/" + version }
