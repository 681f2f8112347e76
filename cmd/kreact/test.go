package main

import (
	"context"
	"io"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/ruletest"
)

func testCmd(ctx context.Context, o *cmdline.TestOptions, stdout, _ io.Writer) error {
	sum, err := ruletest.Run(ctx, o.Paths, stdout, o.Options)
	switch {
	case err != nil:
		return err
	case sum.Failed > 0:
		return cmdline.ErrTestsFailed
	}
	return ctx.Err()
}
