package resume

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Warnings logs the failures of a ListWatch (Options.Transient) and of
// its informer's reflector (its watch-error handler). A failure that
// waiting cures is retried within a second, so it is logged at Warn at
// most once per Every and at Debug otherwise, rather than per retry; the
// end of a watch (io.EOF) is not logged, and an expired one, which is
// relisted, at Debug. Its methods are safe for concurrent use.
type Warnings struct {
	// Log receives the lines, with the attributes that name the watch.
	Log *slog.Logger
	// Msg is the message of a failure.
	Msg string
	// Every is the shortest time between two warnings; zero warns every
	// time.
	Every time.Duration

	mu   sync.Mutex
	last time.Time
}

// Failed logs err.
func (w *Warnings) Failed(err error) {
	switch {
	case errors.Is(err, io.EOF):
		return
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		w.Log.Debug("watch expired, relisting", "err", err)
		return
	}
	w.mu.Lock()
	now := time.Now()
	loud := now.Sub(w.last) >= w.Every
	if loud {
		w.last = now
	}
	w.mu.Unlock()
	level := slog.LevelDebug
	if loud {
		level = slog.LevelWarn
	}
	w.Log.Log(context.Background(), level, w.Msg, "err", err)
}
