package main

import "github.com/kreact/kreact/cmd/kreact/cmdline"

// The exit codes (cmdline.ExitCode) as the tests name them.
const (
	exitOK      = cmdline.ExitOK
	exitError   = cmdline.ExitError
	exitUsage   = cmdline.ExitUsage
	exitInvalid = cmdline.ExitInvalid
	exitCluster = cmdline.ExitCluster
)
