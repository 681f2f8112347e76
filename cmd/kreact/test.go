package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/kreact/kreact/ruletest"
	"github.com/kreact/kreact/source"
)

// defaultTestDir is what `kreact test` runs without arguments.
const defaultTestDir = "tests"

func testCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var opts ruletest.Options
	fs := newFlagSet("test", "kreact test [FILE|DIR ...] [--update] [-v]",
		`Run rule tests offline, without a cluster. Each test file (kind RuleTest)
names rules, objects in a fake cache and events, and lists the actions the
rules must ask for. A directory contributes its *.yaml and *.yml files (not
its subdirectories'); without arguments, ./tests is run.

Prints one line per case and a summary, like go test. Exit code 1 if a case
fails, 3 if a test file or rule is invalid. See ruletest/REFERENCE.md.`)
	fs.BoolVarP(&opts.Update, "update", "", false, "rewrite expect.actions of the cases whose actions differ with the actual actions")
	fs.BoolVarP(&opts.Verbose, "verbose", "v", false, "also print the actions and logs of passing cases")
	if err := fs.Parse(args); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		if _, err := os.Stat(defaultTestDir); err != nil {
			return &usageError{Msg: "test: no test files: name files or directories, or run in a directory that has ./" + defaultTestDir}
		}
		paths = []string{defaultTestDir}
	}
	sum, err := ruletest.Run(ctx, paths, stdout, opts)
	var invalid source.ErrorList
	switch {
	case errors.As(err, &invalid):
		return &invalidError{err}
	case err != nil:
		return err
	case sum.Failed > 0:
		return errTestsFailed
	}
	return ctx.Err()
}
