package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/ruletest"
)

// defaultTestDir is what `kreact test` runs without arguments.
const defaultTestDir = "tests"

func testCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var opts ruletest.Options
	fs := commandFlags("test", stdout)
	fs.BoolVarP(&opts.Update, "update", "", false, "rewrite expect.actions of the cases whose actions differ with the actual actions")
	fs.BoolVarP(&opts.Verbose, "verbose", "v", false, "also print the actions and logs of passing cases")
	fs.BoolVarP(&opts.Explain, "explain", "", false, "for each failing case, say what each rule did with each object the case names, and why: which watch leaves it out, which ignored path swallowed a change, each call and action")
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
	var invalid diag.ErrorList
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
