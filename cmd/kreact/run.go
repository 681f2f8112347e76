package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/rules"
)

type runFlags struct {
	files          []string
	dryRun         bool
	reloadInterval time.Duration
	cluster        clusterFlags
	log            logFlags
	serve          serveFlags
	leader         leaderFlags
	shards         shardFlags
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("run", "kreact run -f FILE|DIR [-f ...] [flags]",
		`Load reaction rules and run them against the cluster until SIGINT or SIGTERM.
Every rule is validated first; each problem is logged as file:line:col and
a rule that does not validate does not run while the others do (exit code 3
if none is valid). Editing a rule file reloads it; an edit that does not
validate keeps that rule's previous version running and logs why. With
--leader-elect, every replica keeps
its caches warm and only the holder of the lease runs the rules; a replica
that loses the lease exits at once. With --shards, every replica is active
and handles its shard of the watched objects.`)
	fs.listVar(&f.files, "filename", "f", "rule file or directory (repeatable)")
	fs.boolVar(&f.dryRun, "dry-run", "", false, "send every action with dryRun=All and log it instead of changing the cluster")
	fs.DurationVar(&f.reloadInterval, "reload-interval", 2*time.Second, "how often to check rule files for changes (0 disables reloading)")
	f.cluster.register(fs)
	f.log.register(fs)
	f.serve.register(fs)
	f.leader.register(fs)
	f.shards.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := f.shards.validate(f.leader.enabled); err != nil {
		return err
	}
	if len(f.files) == 0 {
		return &usageError{"run: no rule files: use -f FILE|DIR"}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("run: unexpected argument %q", fs.Arg(0))}
	}
	logger, err := f.log.logger(stderr)
	if err != nil {
		return err
	}
	setMemoryLimit(logger, os.Getenv, os.ReadFile)
	// A broken rule file is reported and skipped: the other rules run.
	type loaded struct {
		rs     []*rules.Rule
		failed []string
		err    error
	}
	l, err := interruptible(ctx, "run: loading rules", func() loaded {
		var l loaded
		l.rs, l.failed, l.err = rules.LoadEach(f.files...)
		return l
	})
	if err != nil {
		return err
	}
	rs, failed, loadErr := l.rs, l.failed, l.err
	if len(rs) == 0 {
		if loadErr == nil {
			loadErr = fmt.Errorf("no rules in %s", strings.Join(f.files, ", "))
		}
		return &invalidError{loadErr}
	}
	logRuleErrors(logger, "rule files with errors are not running", loadErr)
	cfg, _, err := f.cluster.load()
	if err != nil {
		return err
	}
	logger.Info("connecting to the API server", "server", cfg.Host, "config", f.cluster.source, "qps", cfg.QPS, "burst", cfg.Burst)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kopts := kube.Options{Logger: logger}
	if f.shards.enabled {
		// The membership outlives the engine's context by nothing: its
		// Lease is deleted when ctx ends, and the others take over.
		members, left, err := f.shards.join(ctx, cfg, logger)
		if err != nil {
			return &clusterError{err}
		}
		defer func() { cancel(); <-left }()
		kopts.Informers = f.shards.informerOptions(members)
	}
	stack, err := kube.Start(ctx, cfg, kopts)
	if err != nil {
		return &clusterError{err}
	}
	obs := newObserver()
	obs.watchInformers(stack.Informers.Status)
	f.leader.notify = obs.setLeading
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		DryRun:          f.dryRun,
		Logger:          logger,
		Observer:        obs,
		MetricsProvider: obs.workqueueProvider(),
		Shards:          f.shards.plan(),
	})
	obs.watchFinalizers(eng.Finalizing)
	engineDone := make(chan error, 1)
	go func() { engineDone <- eng.Run(ctx) }()
	stopAll := func() error {
		cancel()
		err := <-engineDone
		return errors.Join(err, stack.Wait())
	}
	if err := f.serve.start(ctx, logger, obs, eng); err != nil {
		_ = stopAll()
		return err
	}
	if f.leader.enabled {
		// Standby replicas fill the caches now, so that taking over costs
		// no initial list.
		stopWarm, err := eng.Warm(rs)
		if err != nil {
			_ = stopAll()
			return err
		}
		defer stopWarm()
	}

	err = f.leader.run(ctx, cfg, logger, func(leadCtx context.Context) error {
		loadErr := eng.Load(leadCtx, rs, failed...)
		if leadCtx.Err() != nil {
			return nil // stopping while the rules load
		}
		logRuleErrors(logger, "rules with errors are not running", loadErr)
		n := running(eng)
		if loadErr != nil && n == 0 {
			return &invalidError{loadErr}
		}
		obs.rulesLoaded(n)
		logger.Info("rules loaded", "rules", n, "files", strings.Join(f.files, ","), "dryRun", f.dryRun)
		waitForSync(leadCtx, logger, newSyncView(eng, stack.Informers), syncPoll, syncReport)
		if f.reloadInterval > 0 {
			go reloadLoop(leadCtx, logger, eng, obs, f.files, f.reloadInterval)
		}
		<-leadCtx.Done()
		return nil
	})
	if errors.Is(err, errLostLeadership) {
		// Stop acting at once: no draining, the new leader takes over.
		logger.Error("lost the leader lease; exiting so that only the new leader acts")
		return err
	}
	logger.Info("shutting down: finishing queued changes and actions")
	err = errors.Join(err, stopAll())
	logger.Info("stopped")
	return err
}

// logRuleErrors logs each problem of a joined or listed error on a line of
// its own, so that every file:line:col stands out, worded as `kreact
// validate` prints it; a problem of one rule (an engine.RuleError) has the
// rule's name as the rule attribute.
func logRuleErrors(logger *slog.Logger, msg string, err error) {
	if err == nil {
		return
	}
	var visit func(err error)
	visit = func(err error) {
		rule := ""
		switch e := err.(type) {
		case *engine.RuleError:
			rule, err = e.Rule, e.Err
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				visit(x)
			}
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			if rule != "" {
				logger.Error(msg, "rule", rule, "error", line)
			} else {
				logger.Error(msg, "error", line)
			}
		}
	}
	visit(err)
}

// running counts the rules the engine runs or keeps waiting for resources.
func running(eng *engine.Engine) int { return len(eng.Status()) }

// reloadLoop reloads the rule files when any of them changes.
func reloadLoop(ctx context.Context, logger *slog.Logger, eng *engine.Engine, obs *observer, paths []string, every time.Duration) {
	last := fingerprintFiles(paths)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := fingerprintFiles(paths)
		if now == last {
			continue
		}
		last = now
		type loaded struct {
			rs     []*rules.Rule
			failed []string
			err    error
		}
		l, err := interruptible(ctx, "reload", func() loaded {
			var l loaded
			l.rs, l.failed, l.err = rules.LoadEach(paths...)
			return l
		})
		if err != nil {
			return
		}
		rs, failed, err := l.rs, l.failed, l.err
		err = errors.Join(err, eng.Load(ctx, rs, failed...))
		if ctx.Err() != nil {
			return
		}
		n := running(eng)
		obs.rulesLoaded(n)
		if err != nil {
			obs.reloadFailed()
			logRuleErrors(logger, "reload: rules with errors keep their previous version", err)
			continue
		}
		logger.Info("rules reloaded", "rules", n)
	}
}

// fingerprintFiles summarises the names, sizes and times of the files under
// paths, so that an edit, a new file or a removed one changes it.
func fingerprintFiles(paths []string) string {
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
