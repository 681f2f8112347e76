package resume

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A retried failure warns once per period and is at Debug between; the
// end of a watch is not logged, an expired one is at Debug.
func TestWarnings(t *testing.T) {
	var buf bytes.Buffer
	w := &Warnings{Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Msg: "list/watch failed, retrying", Every: time.Hour}
	refused := errors.New("connection refused")
	w.Failed(refused)
	w.Failed(refused)
	w.Failed(io.EOF)
	w.Failed(apierrors.NewResourceExpired("too old"))
	w.Failed(apierrors.NewGone("gone"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=WARN msg="list/watch failed, retrying"`,
		`level=DEBUG msg="list/watch failed, retrying"`,
		`level=DEBUG msg="watch expired, relisting"`,
		`level=DEBUG msg="watch expired, relisting"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d = %s\nwant it to contain %s", i, l, want[i])
		}
	}
}
