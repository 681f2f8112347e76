package cmdline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Records go to the handler routed last, with the attributes and groups
// added before the swap.
func TestRouteKlogSwapsTheTarget(t *testing.T) {
	var a, b bytes.Buffer
	routeKlog(slog.NewTextHandler(&a, nil))
	l := slog.New(swapHandler{}).With("component", "x").WithGroup("g")
	l.Info("one", "k", 1)
	routeKlog(slog.NewTextHandler(&b, nil))
	l.Info("two", "k", 2)
	if got := a.String(); !strings.Contains(got, "msg=one component=x g.k=1") || strings.Contains(got, "msg=two") {
		t.Errorf("first handler got %q", got)
	}
	if got := b.String(); !strings.Contains(got, "msg=two component=x g.k=2") || strings.Contains(got, "msg=one") {
		t.Errorf("second handler got %q", got)
	}
}
