package main

import (
	"context"
	"errors"
	"io"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/ruletest"
)

func testCmd(ctx context.Context, o *cmdline.TestOptions, stdout, _ io.Writer) error {
	sum, err := ruletest.Run(ctx, o.Paths, stdout, o.Options)
	var invalid diag.ErrorList
	switch {
	case errors.As(err, &invalid):
		return &cmdline.InvalidError{Err: err}
	case err != nil:
		return err
	case sum.Failed > 0:
		return cmdline.ErrTestsFailed
	}
	return ctx.Err()
}
