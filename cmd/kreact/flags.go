package main

import (
	"context"
	"embed"
	"io"
	"strings"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
)

// userAgent is what kreact's requests to the API server send.
func userAgent() string { return "kreact/" + currentBuild().Version }

// The help of each command is a text file in help/, NAME.txt (a space in
// the name as a dash): the usage line, a blank line and the description
// that --help prints.
//
//go:embed help
var helpFiles embed.FS

// commandFlags returns the flag set of the command name, with its help,
// which --help prints to stdout.
func commandFlags(name string, stdout io.Writer) *cmdline.FlagSet {
	usage, description, _ := strings.Cut(helpText(strings.ReplaceAll(name, " ", "-")), "\n\n")
	fs := cmdline.NewFlagSet(name, usage, description)
	fs.Out = stdout
	return fs
}

// parsed is the run of a command whose options (cmdline.Parse, with the
// help of name) run takes.
func parsed[O any, P interface {
	*O
	cmdline.Options
}](name string, run func(context.Context, P, io.Writer, io.Writer) error) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		o := P(new(O))
		if err := cmdline.Parse(commandFlags(name, stdout), args, o); err != nil {
			return err
		}
		return run(ctx, o, stdout, stderr)
	}
}

// helpText returns help/NAME.txt without its final newline.
func helpText(name string) string {
	data, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // the files are embedded: a missing one is a bug TestHelp finds
	}
	return strings.TrimSuffix(string(data), "\n")
}
