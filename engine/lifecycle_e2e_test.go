//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// gate is a slog.Handler that, on a record with its message, says so on
// entered and blocks until release is closed.
type gate struct {
	slog.Handler
	msg     string
	once    *sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gate) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == g.msg {
		g.once.Do(func() { close(g.entered) })
		<-g.release
	}
	return g.Handler.Handle(ctx, r)
}

func (g *gate) WithAttrs(as []slog.Attr) slog.Handler {
	c := *g
	c.Handler = g.Handler.WithAttrs(as)
	return &c
}

func (g *gate) WithGroup(name string) slog.Handler {
	c := *g
	c.Handler = g.Handler.WithGroup(name)
	return &c
}

// A rule's script top level runs when its runtimes are built, while the
// rule starts; Status (and with it /readyz) must not wait for it.
func TestStatusAnswersWhileARuleStarts(t *testing.T) {
	g := &gate{msg: "top level runs", once: &sync.Once{}, entered: make(chan struct{}), release: make(chan struct{})}
	h := startWith(t, engine.Options{}, func(next slog.Handler) slog.Handler { g.Handler = next; return g })
	steady := labelRule("steady", "status-while-starting", "k", "v")
	h.mustLoad(steady)

	slow := steady + "---\n" + strings.Replace(labelRule("slow", "status-while-starting", "k", "v"),
		"    function onAdd", "    kreact.log(\"top level runs\");\n    function onAdd", 1)
	loaded := make(chan error, 1)
	go func() { loaded <- h.load(slow) }()
	<-g.entered
	// The top level of "slow" is running, held by the gate: Status answers.
	got := h.engine.Status()
	close(g.release)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rule != "steady" {
		t.Errorf("Status while slow starts = %+v, want steady alone", got)
	}
	if st := h.engine.Status(); len(st) != 2 || st[0].Rule != "slow" || st[1].Rule != "steady" {
		t.Errorf("Status after the load = %+v, want slow and steady", st)
	}
}

// Overlapping Loads run one after the other: whichever runs last decides
// the set, and no rule runs twice.
func TestOverlappingLoadsAreSerialised(t *testing.T) {
	h := start(t, engine.Options{})
	sets := make([][]*rules.Rule, 4)
	for i := range sets {
		yaml := labelRule("shared", "overlap", "version", fmt.Sprint(i)) + "---\n" + labelRule(fmt.Sprintf("own-%d", i), "overlap", "k", "v")
		rs, err := rules.Parse("rules.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		sets[i] = rs
	}
	var wg sync.WaitGroup
	for _, rs := range sets {
		wg.Go(func() {
			if err := h.engine.Load(t.Context(), rs); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var names []string
	for _, s := range h.engine.Status() {
		names = append(names, s.Rule)
	}
	if len(names) != 2 || names[1] != "shared" || !strings.HasPrefix(names[0], "own-") {
		t.Errorf("rules after overlapping loads = %v, want shared and one own-N", names)
	}
}

// The warm watches of a standby are released by the first Load: rules
// that run hold their own, and rules no longer in the set keep none.
func TestLoadReleasesWarmWatches(t *testing.T) {
	h := start(t, engine.Options{})
	rs, err := rules.Parse("rules.yaml", []byte(labelRule("kept", "warm-kept", "k", "v")+"---\n"+labelRule("gone", "warm-gone", "k", "v")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	warmDone := make(chan error, 1)
	go func() { warmDone <- h.engine.Warm(ctx, rs) }()
	owners := func() []string {
		var out []string
		for _, s := range h.informers.Status() {
			out = append(out, s.Owners...)
		}
		slices.Sort(out)
		return out
	}
	testcluster.Eventually(t, "the warm watches", func() bool { return h.engine.WarmWatches() == 2 })
	if got := owners(); !slices.Contains(got, "warm:gone") || !slices.Contains(got, "warm:kept") {
		t.Fatalf("informer owners %v, want warm:gone and warm:kept", got)
	}
	h.mustLoad(labelRule("kept", "warm-kept", "k", "v"))
	if n := h.engine.WarmWatches(); n != 0 {
		t.Errorf("%d warm watches held after Load", n)
	}
	for _, o := range owners() {
		if strings.HasPrefix(o, "warm:") {
			t.Errorf("informer owner %q after Load", o)
		}
	}
	cancel()
	if err := <-warmDone; err != nil {
		t.Errorf("Warm = %v", err)
	}
}
