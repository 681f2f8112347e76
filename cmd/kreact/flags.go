package main

import (
	"embed"
	"io"
	"strings"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
)

// The flag machinery is package cmdline's; the commands here say only
// which flags they have.
type (
	flagSet      = cmdline.FlagSet
	clusterFlags = cmdline.ClusterFlags
	logFlags     = cmdline.LogFlags
	leaderFlags  = cmdline.LeaderFlags
	shardFlags   = cmdline.ShardFlags
	serveFlags   = cmdline.ServeFlags
	// admissionFlags say how the API server reaches the admission
	// webhooks, for run and webhooks.
	admissionFlags = cmdline.AdmissionFlags
	// resourceFlags are --crd and the cluster flags of validate and rbac.
	resourceFlags = cmdline.ResourceFlags
)

// userAgent is what kreact's requests to the API server send.
func userAgent() string { return "kreact/" + version }

// The help of each command is a text file in help/, NAME.txt (a space in
// the name as a dash): the usage line, a blank line and the description
// that --help prints.
//
//go:embed help
var helpFiles embed.FS

// commandFlags returns the flag set of the command name, with its help,
// which --help prints to stdout.
func commandFlags(name string, stdout io.Writer) *flagSet {
	usage, description, _ := strings.Cut(helpText(strings.ReplaceAll(name, " ", "-")), "\n\n")
	fs := cmdline.NewFlagSet(name, usage, description)
	fs.Out = stdout
	return fs
}

// helpText returns help/NAME.txt without its final newline.
func helpText(name string) string {
	data, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // the files are embedded: a missing one is a bug TestHelp finds
	}
	return strings.TrimSuffix(string(data), "\n")
}

// namespaceFor is the namespace kubectl would use: every namespace ("")
// with -A, else -n, else the kubeconfig context's.
func namespaceFor(flag string, all bool, contextNS string) string {
	switch {
	case all:
		return ""
	case flag != "":
		return flag
	}
	return contextNS
}
