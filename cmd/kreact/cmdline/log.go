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

// QuietLogger is Logger, but at the info level it logs at warn: for what
// would bury a command's progress (kreact preview: a line per dry-run
// action, and the scripts' own info lines, whose output has the actions).
// Like Logger, it routes client-go's klog into the logger it returns.
func (l *LogFlags) QuietLogger(stderr io.Writer) (*slog.Logger, error) {
	quiet := *l
	var level slog.Level
	if level.UnmarshalText([]byte(l.Level)) == nil && level == slog.LevelInfo {
		quiet.Level = "warn"
	}
	return quiet.Logger(stderr)
}
