package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
)

// Loader is what Loop hands the rules to: Engine.
type Loader interface {
	Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error
}

// Options configure Loop.
type ReloadOptions struct {
	// Paths are the rule files and directories, as given to
	// rules.LoadEach.
	Paths []string
	// Interval is how often the files are looked at; it must be positive.
	Interval time.Duration
	// Reloaded, if set, is called after each reload with its error: the
	// files' problems and the engine's, joined; nil when every rule
	// loaded.
	Reloaded func(err error)
	// Changed, if set, is called before each reload with the files whose
	// name, size or modification time changed since the last load (new,
	// edited and removed ones), from the goroutine that calls Reloaded.
	Changed func(files map[string]bool)
	// Since is the Fingerprint of Paths taken before the rules that run
	// now were read from them: files edited after that are reloaded at the
	// first look, even if the edit came before Loop started (while the
	// first rules loaded and their caches filled). Empty means the files
	// as they are when Loop starts.
	Since string
	// Read reads the files at each reload. Nil means ReadRules.
	Read Reader
}

// A Reader reads the rule files at paths, as ReadRules does; what names
// the read, in the error of a ctx that ends first.
type Reader func(ctx context.Context, what string, paths []string) (RuleFiles, error)

var _ Reader = ReadRules

// RuleFiles are the rules read from rule files: the rules of a file with
// problems may be left out, the others run.
type RuleFiles struct {
	Rules []*rules.Rule
	// Failed are the files with problems, whose rules that are not among
	// Rules keep running as they were (Engine.Load's keepSources).
	Failed []string
	// Err holds every problem of the files.
	Err error
	// Since is the Fingerprint of the files taken before they were read
	// (ReloadOptions.Since), so that an edit made while they load is
	// reloaded, not missed.
	Since string
}

// NoRules is a NoRulesError when f holds no rule: the problems of the
// files at paths, or that they hold none; nil when f holds one.
func (f RuleFiles) NoRules(paths []string) error {
	if len(f.Rules) > 0 {
		return nil
	}
	return &NoRulesError{cmp.Or(f.Err, fmt.Errorf("no rules in %s", strings.Join(paths, ", ")))}
}

// ReadRules reads the rule files at paths (rules.LoadEach): the rules of
// the files that parse, and no rule of those that do not; it checks no
// rule (Load does). It is a Reader: if ctx ends first it returns ctx's
// error at once, naming what it was doing, and leaves the read to finish
// on its own (lifecycle.Interruptible): a stop is not held up by a slow
// disk.
func ReadRules(ctx context.Context, what string, paths []string) (RuleFiles, error) {
	return lifecycle.Interruptible(ctx, what, func() RuleFiles {
		f := RuleFiles{Since: Fingerprint(paths)}
		f.Rules, f.Failed, f.Err = rules.LoadEach(paths...)
		return f
	})
}

// Follow returns the component that loads files' rules into l, then
// reloads them when their files change (Reload; an Interval of zero never
// reloads), until its context ends. opts.Reloaded, if set, is told the
// error of l's every load, the first too, but for those that its
// context's end interrupted: l's own error only, not the problems of the
// files, which the rule set reports. It is what keeps a loader other than
// the engine, the admission server of every replica, in step with the
// rule files.
func Follow(l Loader, files RuleFiles, opts ReloadOptions) lifecycle.Func {
	return func(ctx context.Context) error {
		loaded := func(_ RuleFiles, err error) {
			if opts.Reloaded != nil && ctx.Err() == nil {
				opts.Reloaded(err)
			}
		}
		loaded(files, l.Load(ctx, files.Rules, files.Failed...))
		if opts.Interval <= 0 {
			<-ctx.Done()
			return nil
		}
		reload(ctx, l, opts, loaded)
		return nil
	}
}

// Reload reloads the rules when their files change, until ctx ends. A
// load under way when ctx ends is not waited for
// (lifecycle.Interruptible).
func Reload(ctx context.Context, l Loader, opts ReloadOptions) {
	reload(ctx, l, opts, func(files RuleFiles, err error) {
		if opts.Reloaded != nil {
			opts.Reloaded(errors.Join(files.Err, err))
		}
	})
}

// reload is Reload, telling loaded the files read and l's error after
// each reload.
func reload(ctx context.Context, l Loader, opts ReloadOptions, loaded func(RuleFiles, error)) {
	last := opts.Since
	if last == "" {
		last = Fingerprint(opts.Paths)
	}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := Fingerprint(opts.Paths)
		if now == last {
			continue
		}
		if opts.Changed != nil {
			opts.Changed(changedFiles(last, now))
		}
		last = now
		read := opts.Read
		if read == nil {
			read = ReadRules
		}
		got, err := read(ctx, "reload", opts.Paths)
		if err != nil {
			return
		}
		err = l.Load(ctx, got.Rules, got.Failed...)
		if ctx.Err() != nil {
			return
		}
		loaded(got, err)
	}
}

// Fingerprint summarises the names, sizes and modification times of the
// files under paths, so that an edit, a new file or a removed one changes
// it.
func Fingerprint(paths []string) string {
	var entries []string
	for _, p := range paths {
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if info, err := os.Stat(path); err == nil {
				entries = append(entries, fmt.Sprintf("%s|%d|%d", path, info.Size(), info.ModTime().UnixNano()))
			}
			return nil
		})
	}
	sort.Strings(entries)
	return strings.Join(entries, "\n")
}

// changedFiles returns the files whose entries differ between two
// Fingerprints: added, removed or changed.
func changedFiles(before, after string) map[string]bool {
	entries := func(fp string) map[string]string {
		m := map[string]string{}
		for e := range strings.SplitSeq(fp, "\n") {
			// path|size|mtime: the path may hold '|', the numbers do not.
			if i := strings.LastIndexByte(e, '|'); i > 0 {
				if j := strings.LastIndexByte(e[:i], '|'); j >= 0 {
					m[e[:j]] = e[j:]
				}
			}
		}
		return m
	}
	b, a := entries(before), entries(after)
	changed := map[string]bool{}
	for path, e := range a {
		if b[path] != e {
			changed[path] = true
		}
	}
	for path := range b {
		if _, ok := a[path]; !ok {
			changed[path] = true
		}
	}
	return changed
}
