package record

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/kreact/kreact/ruletest"
)

// ReplayHint says why a recorded case may not replay (see the package's
// doc, Limits of the replay).
const ReplayHint = "did the rules watch or read objects not recorded, did changes that came together coalesce into one call, " +
	"or does a script write the clock into an action (kreact.now(), Date, kreact.once)? Live it reads the time of the call, " +
	"offline the time recorded for the change, to the millisecond. See `kreact record --help`"

// Write writes r as a case (Case) to the file path, or to stdout when
// path is empty. A file is then run as kreact test will run it (package
// ruletest), so that what the replay cannot reproduce (see the package's
// doc) is said now, not found later: a warning on logger that says what
// differs, with ReplayHint, and the test's report on stderr.
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
		what := []any{"file", path}
		if err != nil {
			what = append(what, "error", err)
		} else {
			var differs []string
			for _, d := range sum.Differs {
				differs = append(differs, strings.TrimPrefix(d, path+"/"))
			}
			what = append(what, "differs", strings.Join(differs, "; "))
		}
		logger.Warn("the case does not replay as recorded", append(what, "hint", ReplayHint)...)
		_, err = io.Copy(stderr, &report)
		return err
	}
	logger.Info("replayed offline with kreact test: the same actions", "file", path)
	return nil
}
