package cmdline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/klog/v2"
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

// client-go's verbosity levels print as DEBUG with their v, not as
// slog's DEBUG+n, and the reflector's line about WatchList, which
// kreact turns off on purpose, is not printed at all.
func TestKlogLevelsAndNoise(t *testing.T) {
	var b bytes.Buffer
	routeKlog(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	klog.Background().V(2).Info("two", "k", 1)
	klog.Background().V(4).Info("four")
	klog.Background().Info("zero")
	klog.Background().V(2).Info("The client used to build this informer/reflector doesn't support WatchList semantics. The feature will be disabled. This is expected in unit tests but not in production.", "feature", "WatchListClient")
	got := b.String()
	for _, want := range []string{"level=DEBUG msg=two k=1 v=2", "level=DEBUG msg=four v=4", "level=INFO msg=zero"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "DEBUG+") || strings.Contains(got, "WatchList") {
		t.Errorf("output has slog's DEBUG+n or the WatchList line:\n%s", got)
	}
}
