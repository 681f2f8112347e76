package record

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/kreact/kreact/ruletest"
)

// Write writes r as a case (Case) to the file path, or to stdout when
// path is empty. A file is then run as kreact test will run it (package
// ruletest), so that what the replay cannot reproduce (see the package's
// doc) is said now, not found later: a warning on logger and the test's
// report on stderr.
func (r *Recording) Write(ctx context.Context, path string, stdout, stderr io.Writer, logger *slog.Logger) error {
	data, err := r.Case()
	if err != nil {
		return err
	}
	logger.Info("recorded", "changes", len(r.Changes), "actions", len(r.Actions), "errors", len(r.Errors), "output", path)
	if path == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	var report bytes.Buffer
	sum, err := ruletest.Run(context.WithoutCancel(ctx), []string{path}, &report, ruletest.Options{})
	if err != nil || sum.Failed > 0 {
		logger.Warn("the case does not replay as recorded: did the rules watch or read objects not recorded, or were changes coalesced? See `kreact record --help`", "file", path, "error", err)
		_, err = io.Copy(stderr, &report)
		return err
	}
	logger.Info("replayed offline with kreact test: the same actions", "file", path)
	return nil
}
