package cmdline

import (
	"fmt"
	"io"
	"log/slog"
)

// LogFlags choose the log format and level.
type LogFlags struct {
	Format, Level string
}

// Register adds --log-format and --log-level to fs.
func (l *LogFlags) Register(fs *FlagSet) {
	fs.StringVarP(&l.Format, "log-format", "", "text", "log format: text or json")
	fs.StringVarP(&l.Level, "log-level", "", "info", "log level: debug, info, warn or error")
}

// Logger builds the slog logger on stderr and routes client-go's klog into
// it; an unknown format or level is a UsageError.
func (l *LogFlags) Logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		return nil, &UsageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", l.Level)}
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch l.Format {
	case "text":
		h = slog.NewTextHandler(stderr, opts)
	case "json":
		h = slog.NewJSONHandler(stderr, opts)
	default:
		return nil, &UsageError{fmt.Sprintf("--log-format %q: want text or json", l.Format)}
	}
	logger := slog.New(h)
	routeKlog(logger.With("source", "client-go").Handler())
	return logger, nil
}
