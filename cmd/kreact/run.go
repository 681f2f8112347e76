package main

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/internal/memlimit"
	"github.com/kreact/kreact/internal/residency"
	"github.com/kreact/kreact/isolation"
	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/replica"
	"github.com/kreact/kreact/ruleobjects"
	"github.com/kreact/kreact/validate"
)

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cmdline.RunOptions
	if err := cmdline.Parse(commandFlags("run", stdout), args, &o); err != nil {
		return err
	}
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	child, err := isolation.RoleOf(os.Getenv)
	if o.Isolated(child) {
		logger = logger.With("isolated", true)
	}
	if err != nil {
		return err
	}
	memlimit.Set(logger, os.Getenv, os.ReadFile)
	// The init functions of some 800 packages touched much of the binary,
	// most of which kreact run never runs again; dropped now, those pages
	// do not add to the peak of the start, when the caches fill (see
	// package residency; engine.WaitForSync trims again once synced).
	if _, err := residency.TrimExecutable(); err != nil {
		logger.Debug("resident executable pages not trimmed", "err", err)
	}
	cfg, _, err := o.Cluster.Load(userAgent())
	if err != nil {
		return err
	}
	logger.Info("connecting to the API server", "server", cfg.Host, "config", o.Cluster.Source, "qps", cfg.QPS, "burst", cfg.Burst)
	// What every replica runs (always), and on top of it what only the
	// leader (or, sharded, every replica for its shard) runs (lifecycle).
	rep, err := replica.Join(cfg, o.Replica(child.Replica, logger))
	if err != nil {
		return err
	}
	stack, err := clientstack.New(ctx, cfg, clientstack.Options{Logger: logger, Informers: rep.Informers})
	if err != nil {
		return &cmdline.ClusterError{Err: err}
	}
	read := validate.Reader(stack, validate.Options{Admission: o.AdmissionConfig})
	files, err := child.ReadRules(ctx, read, o.Files, logger)
	if err != nil {
		return err
	}
	rec := metrics.New()
	build := currentBuild()
	rec.BuildInfo(build.Version, build.Commit, build.GoVersion)
	rec.WatchInformers(stack.Informers.Status)
	ready := metrics.NewReadiness(rec)
	iso, err := isolation.New(isolation.Options{Child: child.Child, Refuse: rep.RefuseIsolation, MoveMisbehaving: o.IsolateMisbehaving,
		Command: func() *exec.Cmd { return isolation.Command(args, stderr, rep.Name) }, Parent: os.Stdin, Logger: logger})
	if err != nil {
		return err
	}
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		DryRun: o.DryRun, Logger: logger, Observer: rec, MetricsProvider: rec, Shards: o.Shards.Plan(), Schedules: rep.Schedules,
		RunsElsewhere: iso.RunsElsewhere, CPULimit: iso.CPULimit, Failures: iso, Trace: o.TraceSize(), Replica: rep.Script,
		Admission: o.AdmissionConfig, Identity: o.Tenants.Identity,
	})
	rec.WatchFinalizers(eng.Finalizing)
	reload := engine.ReloadOptions{Paths: o.Files, Interval: o.ReloadInterval, Since: files.Since, Read: read}
	adm, admitting, err := admissionServer(&o, child.Child, stack, rec, files, reload, logger)
	if err != nil {
		return err
	}
	explainer := explain.Handler(explain.Live{Resolve: stack.Mapper.Resolve, Client: stack.Client, Rules: eng.Explain,
		Shard: rep.Membership, ShardByNamespace: o.Shards.Key == "namespace", Elsewhere: iso.RulesElsewhere}.Source())
	// /readyz: the rules have caught up with their watches, and the caches
	// that admission handlers read too.
	readiness := func() error {
		return cmp.Or(ready.Check(func() []string { return engine.RulesBehind(eng.Status()) }), adm.Ready())
	}
	srv, err := metrics.Listen(ctx, rec, o.Serve.Options(explainer, readiness, logger))
	if err != nil {
		return cmdline.ListenError(err)
	}
	if o.RuleObjects {
		ready.WaitForObjects()
	}
	lead, standby := ruleSet(&o, child.Child, files, reload, iso, eng, stack, rec, child.Loaded(ready.RulesLoaded), ready.ObjectsLoaded, logger)
	always := append(append(rep.Always, stack, srv), append(admitting, standby...)...)
	elect, err := o.Leader.Options(rep.Name, logger)
	if err != nil {
		return err
	}
	leading, err := leader.Lead(cfg, elect, func(leads bool) { rep.SetLeading(leads); ready.SetLeading(leads) }, lead)
	if err != nil {
		return err
	}
	return stopped(child, logger, append(rep.Layers, always, leading).Start(ctx))
}

// stopped is kreact run's end once its components stopped with err.
func stopped(role isolation.Role, logger *slog.Logger, err error) error {
	if errors.Is(err, leader.ErrLostLease) {
		logger.Error("lost the leader lease; exiting so that only the new leader acts")
		return err
	}
	logger.Info("stopped")
	return role.Ended(err)
}

// admissionServer is the rules' admission webhook server and what keeps
// its rules in step with their files, which every replica runs; none in
// the isolated rules' process and with no --admission-bind-address.
func admissionServer(o *cmdline.RunOptions, isolatedChild bool, stack *clientstack.Stack, rec *metrics.Recorder, files engine.RuleFiles, reload engine.ReloadOptions, logger *slog.Logger) (*admission.Server, []lifecycle.Runnable, error) {
	a, opts := &o.Admission, o.AdmissionConfig
	if isolatedChild || a.Addr == "" {
		return nil, nil, nil
	}
	certs, err := admission.CertificateSource(opts, admission.CertificateOptions{CertFile: a.CertFile, KeyFile: a.KeyFile, CASecret: a.CASecret, Client: stack.Client})
	if err != nil {
		return nil, nil, &cmdline.InvalidError{Err: err}
	}
	var applier admission.Applier
	if a.Apply {
		applier = admission.NewApplier(stack.Client)
	}
	var check admission.RuleObjectChecker
	if a.ValidateRules {
		check = validate.ObjectChecker(stack, validate.Options{Admission: opts}, o.Tenants.Limits)
	}
	adm, err := admission.NewServer(admission.ServerOptions{Addr: a.Addr, Certificates: certs, Config: opts, Applier: applier,
		Mapper: stack.Mapper, Informers: stack.Informers, Observer: rec, Logger: logger, RuleObjects: check})
	reload.Reloaded = func(err error) { admission.LogLoad(logger, err) }
	// With --rule-objects, the rule objects' handlers too, on every
	// replica: the webhooks' Service may send a review to any of them.
	parts := engine.Combine(adm, 2)
	follow := []lifecycle.Runnable{adm, engine.Follow(parts.Part(0), files, reload)}
	if o.RuleObjects {
		objects := ruleobjects.Options{Informers: stack.Informers, Loader: parts.Part(1), Admission: true, Limits: o.Tenants.Limits, Served: stack.Served, Logger: logger}
		follow = append(follow, lifecycle.Func(func(ctx context.Context) error { return ruleobjects.Run(ctx, objects) }))
	}
	return adm, follow, err
}

// ruleSet is what runs only while this replica leads: the engine, the
// rule set (this process's side of it, counted for readiness with loaded),
// iso, and with --rule-objects the rule objects, loaded with the files'
// rules as one set; and with --leader-elect the standby, which fills the
// caches so that taking over the lease costs no initial list.
func ruleSet(o *cmdline.RunOptions, child bool, files engine.RuleFiles, reload engine.ReloadOptions, iso *isolation.Isolation, eng *engine.Engine, stack *clientstack.Stack, rec *metrics.Recorder, loaded func(int), objectsLoaded func(), logger *slog.Logger) (lifecycle.Group, []lifecycle.Runnable) {
	reload.Reloaded = rec.Reloaded
	combined := engine.Combine(iso.Loader(eng), 2)
	set := &engine.RuleSet{Engine: combined.Part(0), Elsewhere: iso.Elsewhere(), Informers: stack.Informers.Status, Rules: files.Rules, Failed: files.Failed, Err: files.Err, Logger: logger,
		Options: reload, Loaded: loaded, Attrs: []any{"dryRun", o.DryRun}}
	lead := lifecycle.Group{lifecycle.Func(eng.Run), set, iso}
	if o.RuleObjects {
		objects := ruleobjects.Options{Informers: stack.Informers, Loader: combined.Part(1), Client: stack.Client,
			Served: stack.Served, Loaded: func() { objectsLoaded(); set.Recount() },
			Counts: rec.RuleCounts, Actions: eng.ActionStats, Elsewhere: iso.RulesElsewhere, Refresh: o.StatusInterval, Limits: o.Tenants.Limits, Logger: logger}
		if child || o.Shards.Enabled {
			objects.Client = nil // the parent writes; shards would each write their own counts
		}
		lead = append(lead, lifecycle.Func(func(ctx context.Context) error { return ruleobjects.Run(ctx, objects) }))
	}
	if !o.Leader.Enabled {
		return lead, nil
	}
	return lead, []lifecycle.Runnable{lifecycle.Func(func(ctx context.Context) error { return eng.Warm(ctx, iso.Rules(files.Rules)) })}
}
