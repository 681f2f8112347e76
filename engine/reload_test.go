package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kreact/kreact/rules"
)

func rule(name, script string) string {
	return "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: " + name + "}\nspec:\n  watch: [{resource: configmaps}]\n  script: '" + script + "'\n"
}

// write replaces the file at path whole (a write to a temporary file, then
// a rename), as an editor or a ConfigMap's symlink swap does: a reload
// that polls every millisecond must not see it half written, empty and
// valid.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func TestFingerprintChangesWithTheFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	write(t, a, rule("a", "function onAdd() {}"))
	first := Fingerprint([]string{dir})
	if Fingerprint([]string{dir}) != first {
		t.Fatal("the fingerprint of unchanged files changed")
	}
	write(t, a, rule("a", "function onAdd(o) {}"))
	edited := Fingerprint([]string{dir})
	if edited == first {
		t.Error("an edit does not change the fingerprint")
	}
	b := filepath.Join(dir, "b.yaml")
	write(t, b, rule("b", "function onAdd() {}"))
	added := Fingerprint([]string{dir})
	if added == edited {
		t.Error("a new file does not change the fingerprint")
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if Fingerprint([]string{dir}) == added {
		t.Error("a removed file does not change the fingerprint")
	}
}

// loader records how many rules it was last given, and returns err.
type loader struct {
	last atomic.Int32
	err  error
}

func (l *loader) Load(_ context.Context, rs []*rules.Rule, _ ...string) error {
	l.last.Store(int32(len(rs)))
	return l.err
}

// writeUntil writes content to path, then again with a growing comment,
// until a reload reports what ok accepts: the loop may take its first
// fingerprint after the first write, and reports every reload.
func writeUntil(t *testing.T, reloaded <-chan error, path, content string, ok func(error) bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for pad := ""; ; pad += "#" {
		write(t, path, content+"\n"+pad+"\n")
		for {
			select {
			case err := <-reloaded:
				if ok(err) {
					return
				}
				continue
			case <-tick.C:
			}
			break
		}
	}
}

func TestLoopReloadsOnChangeAndStopsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), rule("a", "function onAdd() {}"))
	l := &loader{}
	reloaded := make(chan error, 1000)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Reload(ctx, l, ReloadOptions{Paths: []string{dir}, Interval: time.Millisecond, Reloaded: func(err error) { reloaded <- err }})
	}()
	writeUntil(t, reloaded, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"), func(err error) bool { return err == nil })
	if n := l.last.Load(); n != 2 {
		t.Errorf("reloaded %d rules, want a and b", n)
	}
	// A file that does not parse is reported; the others are loaded.
	writeUntil(t, reloaded, filepath.Join(dir, "b.yaml"), "kind: [", func(err error) bool { return err != nil })
	if n := l.last.Load(); n != 1 {
		t.Errorf("reloaded %d rules, want a alone", n)
	}
	cancel()
	<-done
}

// An edit between reading the rules (Since) and the start of Loop, while
// the first rules load and their caches fill, is reloaded at the first
// look rather than missed until the next edit.
func TestLoopReloadsAnEditMadeBeforeItStarted(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), rule("a", "function onAdd() {}"))
	since := Fingerprint([]string{dir})
	write(t, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"))
	l := &loader{}
	reloaded := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Reload(ctx, l, ReloadOptions{Paths: []string{dir}, Interval: time.Millisecond, Since: since, Reloaded: func(err error) { reloaded <- err }})
	}()
	if err := <-reloaded; err != nil {
		t.Errorf("reload: %v", err)
	}
	if n := l.last.Load(); n != 2 {
		t.Errorf("reloaded %d rules, want a and b", n)
	}
	cancel()
	<-done
}

// Follow loads the rules it is given, tells Reloaded how that went, then
// reloads on an edit; with no Interval it loads once and waits.
func TestFollowLoadsThenReloads(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), rule("a", "function onAdd() {}"))
	files, err := ReadRules(t.Context(), "reading", []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if files.Since == "" || files.Since != Fingerprint([]string{dir}) {
		t.Errorf("ReadRules' Since = %q, want the files' Fingerprint", files.Since)
	}
	for _, interval := range []time.Duration{0, time.Millisecond} {
		l := &loader{}
		reloaded := make(chan error, 1000)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			done <- Follow(l, files, ReloadOptions{Paths: []string{dir}, Interval: interval, Reloaded: func(err error) { reloaded <- err }})(ctx)
		}()
		if err := <-reloaded; err != nil || l.last.Load() != 1 {
			t.Errorf("interval %s: first load told %v with %d rules, want nil and a", interval, err, l.last.Load())
		}
		if interval > 0 {
			writeUntil(t, reloaded, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"), func(err error) bool { return err == nil })
			if n := l.last.Load(); n != 2 {
				t.Errorf("reloaded %d rules, want a and b", n)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("interval %s: Follow = %v", interval, err)
		}
	}
}

// TestFollowIsToldItsLoadersErrorOnly: a rule file that does not parse
// is the rule set's to report, not the follower's (the admission server
// logged it as its own, issue 37): Reloaded is told the loader's error,
// and only it.
func TestFollowIsToldItsLoadersErrorOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), rule("a", "function onAdd() {}"))
	write(t, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"))
	files, err := ReadRules(t.Context(), "reading", []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	notServed := errors.New("not served")
	for _, l := range []*loader{{}, {err: notServed}} {
		reloaded := make(chan error, 1000)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			done <- Follow(l, files, ReloadOptions{Paths: []string{dir}, Interval: time.Millisecond, Reloaded: func(err error) { reloaded <- err }})(ctx)
		}()
		if err := <-reloaded; err != l.err {
			t.Errorf("first load told %v, want %v", err, l.err)
		}
		writeUntil(t, reloaded, filepath.Join(dir, "b.yaml"), "kind: [", func(err error) bool {
			if err != l.err {
				t.Errorf("a reload with b.yaml broken told %v, want %v", err, l.err)
			}
			return l.last.Load() == 1
		})
		cancel()
		<-done
		write(t, filepath.Join(dir, "b.yaml"), rule("b", "function onAdd() {}"))
	}
}

// Files with no rule are a NoRulesError: their problems, or, with none,
// that they hold no rule; files with one are not.
func TestNoRules(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "ok.yaml"), rule("ok", "function onAdd() {}"))
	write(t, filepath.Join(dir, "bad.yaml"), "kind: [")
	for _, c := range []struct {
		name, path, want string
	}{
		{"rules", dir, ""},
		{"broken", filepath.Join(dir, "bad.yaml"), "bad.yaml:"},
		{"empty", t.TempDir(), "no rules in "},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, err := ReadRules(t.Context(), "test", []string{c.path})
			if err != nil {
				t.Fatal(err)
			}
			err = files.NoRules([]string{c.path})
			var none *NoRulesError
			if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &none) || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("NoRules = %v, want a NoRulesError with %q", err, c.want)
			}
		})
	}
}
