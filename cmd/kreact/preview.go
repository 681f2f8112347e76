package main

import (
	"context"
	"io"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/record"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/validate"
)

func previewCmd(ctx context.Context, o *cmdline.PreviewOptions, stdout, stderr io.Writer) error {
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	// A line per dry-run action, and the scripts' own info lines, would
	// bury the preview's progress: stdout has the actions.
	rulesLogger, err := o.Log.QuietLogger(stderr)
	if err != nil {
		return err
	}
	stack, _, err := o.Cluster.Connect(ctx, userAgent(), logger, clientstack.New)
	if err != nil {
		return err
	}
	sets := [][]*rules.Rule{}
	for _, files := range [][]string{o.Against, o.Files} {
		if len(files) == 0 {
			continue
		}
		rs, err := validate.CheckRunnable(ctx, files, stack.Mapper)
		if err != nil {
			return err
		}
		sets = append(sets, rs)
	}
	logger.Info("previewing: the rules are handed every object they watch, in dry-run", "host", stack.Config.Host)
	plans, err := record.Preview(ctx, stack, sets, record.PreviewOptions{Namespace: o.Namespace, LabelSelector: o.LabelSelector, Logger: logger, RulesLogger: rulesLogger})
	if err != nil {
		return err
	}
	changes, err := record.WritePreview(stdout, plans, o.Output)
	if err == nil && changes && o.ExitCode {
		return cmdline.ErrChanges
	}
	return err
}
