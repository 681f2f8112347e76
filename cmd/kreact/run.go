package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/internal/memlimit"
	"github.com/kreact/kreact/isolation"
	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/reaction"
	"github.com/kreact/kreact/reload"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/source"
)

type runFlags struct {
	files []string
	// isolatedMetrics is the metrics address of the isolated rules'
	// process: each process reads the flag, and that one serves it.
	isolatedMetrics string
	// isolateMisbehaving moves a rule whose call hogged the process to the
	// isolated rules' process.
	isolateMisbehaving bool
	dryRun             bool
	reloadInterval     time.Duration
	cluster            clusterFlags
	log                logFlags
	serve              serveFlags
	leader             leaderFlags
	shards             shardFlags
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := commandFlags("run", stdout)
	fs.ListVarP(&f.files, "filename", "f", "rule file or directory (repeatable)")
	fs.BoolVarP(&f.dryRun, "dry-run", "", false, "send every action with dryRun=All and log it instead of changing the cluster")
	fs.DurationVar(&f.reloadInterval, "reload-interval", 2*time.Second, "how often to check rule files for changes (0 disables reloading)")
	fs.StringVarP(&f.isolatedMetrics, "isolated-metrics-bind-address", "", "",
		"address for the /metrics, /healthz and /readyz of the process that runs the isolated rules (spec.isolate, and those moved for misbehaving), e.g. :8082 (empty disables)")
	fs.BoolVarP(&f.isolateMisbehaving, "isolate-misbehaving", "", true,
		"stop a call that computes for 50ms of CPU, and move a rule to the isolated rules' process when one of its calls is stopped so, or at its timeout or memory limit while computing, until its file changes")
	f.cluster.Register(fs)
	f.log.Register(fs)
	f.serve.Register(fs)
	f.leader.Register(fs)
	f.shards.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := f.shards.Validate(f.leader.Enabled); err != nil {
		return err
	}
	if len(f.files) == 0 {
		return &usageError{Msg: "run: no rule files: use -f FILE|DIR"}
	}
	if fs.NArg() > 0 {
		return &usageError{Msg: fmt.Sprintf("run: unexpected argument %q", fs.Arg(0))}
	}
	if a := f.isolatedMetrics; a != "" && (a == f.serve.MetricsAddr || a == f.serve.HealthAddr) {
		return &usageError{Msg: fmt.Sprintf("run: --isolated-metrics-bind-address %s is already this process's address", a)}
	}
	logger, err := f.log.Logger(stderr)
	if err != nil {
		return err
	}
	// The kreact process of the isolated rules (package isolation) runs
	// only those, and only while its parent runs, which leads; it serves
	// its endpoints on an address of its own.
	isolatedChild := os.Getenv(isolation.ChildEnv) == "1"
	// The isolated process tells kreact run how many rules it runs, and
	// why none can if so (nil elsewhere: reports nothing).
	var reporter *isolation.Reporter
	if isolatedChild {
		logger = logger.With("isolated", true)
		f.leader = leaderFlags{}
		f.serve = serveFlags{MetricsAddr: f.isolatedMetrics}
		if reporter, err = isolation.OpenReporter(os.Getenv); err != nil {
			return err
		}
	}
	memlimit.Set(logger, os.Getenv, os.ReadFile)
	// A broken rule file is reported and skipped: the other rules run.
	type loaded struct {
		rs     []*rules.Rule
		failed []string
		err    error
	}
	// Taken before reading, so that an edit made while the rules load is
	// reloaded, not missed.
	readFiles := reload.Fingerprint(f.files)
	l, err := lifecycle.Interruptible(ctx, "run: loading rules", func() loaded {
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
		reporter.Invalid(loadErr)
		return &invalidError{loadErr}
	}
	source.Log(logger, "rule files with errors are not running", loadErr)
	cfg, _, err := f.cluster.Load(userAgent())
	if err != nil {
		return err
	}
	logger.Info("connecting to the API server", "server", cfg.Host, "config", f.cluster.Source, "qps", cfg.QPS, "burst", cfg.Burst)

	// What every replica runs, and on top of it what only the leader (or,
	// sharded, every replica for its shard) runs; see package lifecycle.
	var layers lifecycle.Layers
	kopts := kube.Options{Logger: logger}
	var always lifecycle.Group
	var schedules reaction.ScheduleOwner
	if f.shards.Enabled {
		m, err := f.shards.Membership(cfg, logger)
		if err != nil {
			return err
		}
		schedules = m
		layers = append(layers, m)
		always = append(always, f.shards.LogRange(m, logger))
		kopts.Informers = f.shards.InformerOptions(m)
	}
	stack, err := kube.New(ctx, cfg, kopts)
	if err != nil {
		return &clusterError{Err: err}
	}
	rec := metrics.New()
	rec.WatchInformers(stack.Informers.Status)
	ready := metrics.NewReadiness(rec)
	iso, err := isolation.New(isolation.Options{
		Child:           isolatedChild,
		Refuse:          refuseIsolation(f.shards.Enabled),
		MoveMisbehaving: f.isolateMisbehaving,
		Command:         func() *exec.Cmd { return isolatedCommand(args, stderr) },
		Parent:          os.Stdin,
		Logger:          logger,
	})
	if err != nil {
		return err
	}
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		DryRun:          f.dryRun,
		Logger:          logger,
		Observer:        rec,
		MetricsProvider: rec,
		Shards:          f.shards.Plan(),
		RunsElsewhere:   iso.RunsElsewhere,
		CPULimit:        iso.CPULimit,
		CallFailed:      iso.CallFailed,
		Schedules:       schedules,
	})
	rec.WatchFinalizers(eng.Finalizing)
	loadedRules := ready.RulesLoaded
	if isolatedChild {
		loadedRules = func(n int) { ready.RulesLoaded(n); reporter.Loaded(n) }
	}
	srv, err := f.serve.Listen(ctx, logger, rec, func() error { return ready.Check(eng) })
	if err != nil {
		return err
	}
	always = append(always, stack, srv)
	if f.leader.Enabled {
		// Standby replicas fill the caches now, so that taking over costs
		// no initial list.
		always = append(always, lifecycle.Func(func(ctx context.Context) error { return eng.Warm(ctx, iso.Rules(rs)) }))
	}
	set := &reload.Rules{Engine: iso.Loader(eng), Informers: stack.Informers.Status, Rules: rs, Failed: failed, Logger: logger,
		Options: reload.Options{Paths: f.files, Interval: f.reloadInterval, Since: readFiles, Reloaded: func(err error) {
			if err != nil {
				rec.ReloadFailed()
			}
		}},
		Loaded: loadedRules, Attrs: []any{"dryRun", f.dryRun},
	}
	if sup := iso.Elsewhere(); sup != nil {
		set.Elsewhere, sup.Reported = sup, set.Recount
	}
	leading, err := f.leader.Lead(cfg, logger, ready.SetLeading, lifecycle.Group{lifecycle.Func(eng.Run), set, iso})
	if err != nil {
		return err
	}
	err = append(layers, always, leading).Start(ctx)
	if errors.Is(err, leader.ErrLostLease) {
		logger.Error("lost the leader lease; exiting so that only the new leader acts")
		return err
	}
	logger.Info("stopped")
	var none *reload.NoRulesError
	if errors.As(err, &none) {
		reporter.Invalid(err)
		return &invalidError{err}
	}
	return err
}

// isolatedCommand is the kreact run of the isolated rules: this program,
// with the same arguments, told by its environment to run only those.
func isolatedCommand(args []string, stderr io.Writer) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), isolation.ChildEnv+"=1")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd
}

// refuseIsolation is why isolated rules cannot run: with --shards, the
// isolated rules' process could not take part in the shard membership.
func refuseIsolation(sharded bool) string {
	if sharded {
		return "not supported with --shards: the isolated rules' process cannot take part in the shard membership"
	}
	return ""
}
