package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/internal/memlimit"
	"github.com/kreact/kreact/isolation"
	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/shard"
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
	admission          admissionFlags
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args, stdout)
	if err != nil {
		return err
	}
	logger, err := f.log.Logger(stderr)
	if err != nil {
		return err
	}
	child, err := f.isolatedChild(&logger)
	if err != nil {
		return err
	}
	memlimit.Set(logger, os.Getenv, os.ReadFile)
	files, err := f.readRules(ctx, logger, child)
	if err != nil {
		return err
	}
	cfg, _, err := f.cluster.Load(userAgent())
	if err != nil {
		return err
	}
	logger.Info("connecting to the API server", "server", cfg.Host, "config", f.cluster.Source, "qps", cfg.QPS, "burst", cfg.Burst)

	// What every replica runs (always), and on top of it what only the
	// leader (or, sharded, every replica for its shard) runs; see package
	// lifecycle.
	sh, err := f.sharding(cfg, logger)
	if err != nil {
		return err
	}
	rep, err := f.replica(sh, child)
	if err != nil {
		return err
	}
	stack, err := kube.New(ctx, cfg, sh.kube)
	if err != nil {
		return &clusterError{Err: err}
	}
	rec := metrics.New()
	rec.WatchInformers(stack.Informers.Status)
	ready := metrics.NewReadiness(rec)
	iso, err := isolation.New(isolation.Options{Child: child.Child, Refuse: sh.refuseIsolation, MoveMisbehaving: f.isolateMisbehaving,
		Command: func() *exec.Cmd { return isolation.Command(args, stderr, rep.name) }, Parent: os.Stdin, Logger: logger})
	if err != nil {
		return err
	}
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		DryRun: f.dryRun, Logger: logger, Observer: rec, MetricsProvider: rec, Shards: f.shards.Plan(), Schedules: sh.schedules,
		RunsElsewhere: iso.RunsElsewhere, CPULimit: iso.CPULimit, CallFailed: iso.CallFailed, Trace: f.traceSize(), Replica: rep.replica,
	})
	f.serveExplain(stack, eng, sh, iso)
	rec.WatchFinalizers(eng.Finalizing)
	// Every replica answers admission reviews; the isolated rules'
	// process leaves them to its parent.
	adm, err := f.admissionServer(child.Child, stack, rec, logger)
	if err != nil {
		return err
	}
	srv, err := f.serve.Listen(ctx, logger, rec, func() error { return readiness(ready, eng, adm) })
	if err != nil {
		return err
	}
	always := append(sh.always, stack, srv)
	always = append(always, f.admissionRunnables(adm, files, logger)...)
	always = append(always, f.standby(eng, iso, files)...)
	set := f.ruleSet(files, iso, eng, stack, rec, child.Loaded(ready.RulesLoaded), logger)
	leading, err := f.leader.Lead(cfg, logger, func(lead bool) { rep.lead.Store(lead); ready.SetLeading(lead) }, lifecycle.Group{lifecycle.Func(eng.Run), set, iso})
	if err != nil {
		return err
	}
	return stopped(child, logger, append(sh.layers, always, leading).Start(ctx))
}

// parseRunFlags reads kreact run's arguments.
func parseRunFlags(args []string, stdout io.Writer) (*runFlags, error) {
	f := &runFlags{}
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
	f.admission.RegisterServe(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := f.shards.Validate(f.leader.Enabled); err != nil {
		return nil, err
	}
	if len(f.files) == 0 {
		return nil, &usageError{Msg: "run: no rule files: use -f FILE|DIR"}
	}
	if fs.NArg() > 0 {
		return nil, &usageError{Msg: fmt.Sprintf("run: unexpected argument %q", fs.Arg(0))}
	}
	if a := f.isolatedMetrics; a != "" && (a == f.serve.MetricsAddr || a == f.serve.HealthAddr) {
		return nil, &usageError{Msg: fmt.Sprintf("run: --isolated-metrics-bind-address %s is already this process's address", a)}
	}
	// Bad certificate files are found before anything starts.
	if err := checkAdmissionFiles(&f.admission); err != nil {
		return nil, err
	}
	return f, nil
}

// isolatedChild returns this process's role (package isolation). The
// isolated rules' process logs with isolated=true, does not take part in
// leader election, and serves its endpoints on
// --isolated-metrics-bind-address only.
func (f *runFlags) isolatedChild(logger **slog.Logger) (isolation.Role, error) {
	role, err := isolation.RoleOf(os.Getenv)
	if role.Child {
		*logger = (*logger).With("isolated", true)
		f.leader = leaderFlags{}
		f.serve = serveFlags{MetricsAddr: f.isolatedMetrics}
	}
	return role, err
}

// invalid is kreact run's end when none of its rules can run: exit code
// 3, and in the isolated process a report of why to its parent.
func invalid(role isolation.Role, err error) error {
	role.Reporter.Invalid(err)
	return &invalidError{err}
}

// stopped is kreact run's end once its components stopped with err.
func stopped(role isolation.Role, logger *slog.Logger, err error) error {
	if errors.Is(err, leader.ErrLostLease) {
		logger.Error("lost the leader lease; exiting so that only the new leader acts")
		return err
	}
	logger.Info("stopped")
	var none *engine.NoRulesError
	if errors.As(err, &none) {
		return invalid(role, err)
	}
	return err
}

// sharding is what --shards adds to kreact run: the shard membership, a
// layer under everything else, and the informers' and the engine's view
// of it. Without --shards it is empty.
type sharding struct {
	layers     lifecycle.Layers
	always     lifecycle.Group
	kube       kube.Options
	schedules  delivery.ScheduleOwner
	membership *shard.Membership
	// refuseIsolation is why isolated rules cannot run: the isolated
	// rules' process could not take part in the shard membership.
	refuseIsolation string
}

func (f *runFlags) sharding(cfg *rest.Config, logger *slog.Logger) (sharding, error) {
	sh := sharding{kube: kube.Options{Logger: logger}}
	if !f.shards.Enabled {
		return sh, nil
	}
	m, err := f.shards.Membership(cfg, logger)
	if err != nil {
		return sh, err
	}
	sh.layers = lifecycle.Layers{m}
	sh.always = lifecycle.Group{f.shards.LogRange(m, logger)}
	sh.kube.Informers = f.shards.InformerOptions(m)
	sh.schedules, sh.membership = m, m
	sh.refuseIsolation = "not supported with --shards: the isolated rules' process cannot take part in the shard membership"
	return sh, nil
}

// traceSize is the rules' trace: kept for kreact explain, none without its
// endpoint.
func (f *runFlags) traceSize() delivery.TraceSize {
	if f.serve.ExplainAddr == "" {
		return delivery.TraceSize{}
	}
	return delivery.DefaultTraceSize
}

// replicaOf is the scripts' kreact.replica(): this replica's
// leader-election identity, else its shard identity, else the host name,
// and whether it leads: holds the lease, or with --shards makes the ticks
// that are once per cluster; a replica that runs alone leads.
type replicaOf struct {
	name  string
	leads func() bool
	lead  atomic.Bool // told by leader election
}

func (f *runFlags) replica(sh sharding, child isolation.Role) (*replicaOf, error) {
	r := &replicaOf{}
	r.name, _ = os.Hostname()
	if name := child.Replica; name != "" {
		// The isolated rules' process runs as part of its parent, and
		// only while the parent runs its rules.
		r.name = name
	}
	r.lead.Store(true)
	r.leads = r.lead.Load
	if f.leader.Enabled {
		var err error
		if f.leader.Identity, err = leader.NewIdentity(); err != nil {
			return nil, err
		}
		r.name = f.leader.Identity
	}
	if sh.membership != nil {
		r.name, r.leads = sh.membership.Identity(), sh.membership.OwnsSchedules
	}
	return r, nil
}

func (r *replicaOf) replica() scripting.Replica {
	return scripting.Replica{Name: r.name, Leader: r.leads()}
}

// admissionServer is the webhook server of the rules' admission
// handlers, which every replica runs, or nil in the isolated rules'
// process and with no --admission-bind-address. A certificate file that
// is missing or does not match its key is invalid input. With
// --admission-ca-secret the CA comes from, or goes to, that Secret.
func (f *runFlags) admissionServer(isolatedChild bool, stack *kube.Stack, rec *metrics.Recorder, logger *slog.Logger) (*admission.Server, error) {
	a := &f.admission
	if isolatedChild || a.Addr == "" {
		return nil, nil
	}
	opts, err := a.Options("run")
	if err != nil {
		return nil, err
	}
	certs, err := admission.CertificateSource(opts, admission.CertificateOptions{CertFile: a.CertFile, KeyFile: a.KeyFile, CASecret: a.CASecret, Client: stack.Client})
	if err != nil {
		return nil, &invalidError{err}
	}
	var applier admission.Applier
	if a.Apply {
		applier = admission.NewApplier(stack.Client)
	}
	return admission.NewServer(admission.ServerOptions{Addr: a.Addr, Certificates: certs, Config: opts, Applier: applier,
		Mapper: stack.Mapper, Informers: stack.Informers, Observer: rec, Logger: logger})
}

// checkAdmissionFiles checks the admission flags that name files: the
// certificate and its key (a missing file, a key that does not match, is
// invalid input) and the CA bundle.
func checkAdmissionFiles(f *admissionFlags) error {
	if f.Addr == "" {
		return nil
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return &usageError{Msg: "run: --admission-cert-file and --admission-key-file go together"}
	}
	if f.CertFile != "" {
		if _, err := admission.LoadCertificates(f.CertFile, f.KeyFile); err != nil {
			return &invalidError{err}
		}
	}
	_, err := f.Options("run")
	return err
}

// errAdmissionNotSynced is the readiness of a replica whose admission
// handlers cannot read their caches yet.
var errAdmissionNotSynced = errors.New("the caches that admission handlers read are not synced")

// readiness is /readyz: the rules have caught up with their watches, and
// the caches that admission handlers read too.
func readiness(ready *metrics.Readiness, eng *engine.Engine, adm *admission.Server) error {
	if err := ready.Check(func() []string { return engine.RulesBehind(eng.Status()) }); err != nil {
		return err
	}
	if adm != nil && !adm.Synced() {
		return errAdmissionNotSynced
	}
	return nil
}

// readRules reads the rule files. A broken rule file is reported and
// skipped: the other rules run; with none left, kreact run exits 3.
func (f *runFlags) readRules(ctx context.Context, logger *slog.Logger, child isolation.Role) (engine.RuleFiles, error) {
	files, err := engine.ReadRules(ctx, "run: loading rules", f.files)
	if err != nil {
		return files, err
	}
	if len(files.Rules) == 0 {
		return files, invalid(child, cmp.Or(files.Err, fmt.Errorf("no rules in %s", strings.Join(f.files, ", "))))
	}
	diag.Log(logger, "rule files with errors are not running", files.Err)
	return files, nil
}

// serveExplain makes --explain-address answer kreact explain from the
// rules' traces.
func (f *runFlags) serveExplain(stack *kube.Stack, eng *engine.Engine, sh sharding, iso *isolation.Isolation) {
	if f.serve.ExplainAddr == "" {
		return
	}
	f.serve.Explain = explain.Handler(explain.Live{Resolve: stack.Mapper.Resolve, Client: stack.Client, Rules: eng.Explain,
		Shard: sh.membership, ShardByNamespace: f.shards.Key == "namespace", Elsewhere: iso.RulesElsewhere}.Source())
}

// ruleSet is kreact run's rule set: the rules read, loaded into this
// process's side of eng, reloaded when their files change (a refused
// reload counted), and counted for readiness with loaded, with those the
// isolated rules' process runs.
func (f *runFlags) ruleSet(files engine.RuleFiles, iso *isolation.Isolation, eng *engine.Engine, stack *kube.Stack, rec *metrics.Recorder, loaded func(int), logger *slog.Logger) *engine.RuleSet {
	return &engine.RuleSet{Engine: iso.Loader(eng), Elsewhere: iso.Elsewhere(), Informers: stack.Informers.Status, Rules: files.Rules, Failed: files.Failed, Logger: logger,
		Options: engine.ReloadOptions{Paths: f.files, Interval: f.reloadInterval, Since: files.Since, Reloaded: func(err error) {
			if err != nil {
				rec.ReloadFailed()
			}
		}},
		Loaded: loaded, Attrs: []any{"dryRun", f.dryRun},
	}
}

// admissionRunnables are the admission server and what keeps its rules in
// step with their files (every replica serves admission, leader or not);
// none without a server.
func (f *runFlags) admissionRunnables(adm *admission.Server, files engine.RuleFiles, logger *slog.Logger) []lifecycle.Runnable {
	if adm == nil {
		return nil
	}
	return []lifecycle.Runnable{adm, engine.Follow(adm, files, engine.ReloadOptions{Paths: f.files, Interval: f.reloadInterval, Since: files.Since,
		Reloaded: func(err error) {
			diag.Log(logger, "admission: rules not served, or their webhook configurations not applied", err)
		}})}
}

// standby is what a replica runs while it waits for the lease: it fills
// the caches now, so that taking over costs no initial list.
func (f *runFlags) standby(eng *engine.Engine, iso *isolation.Isolation, files engine.RuleFiles) []lifecycle.Runnable {
	if !f.leader.Enabled {
		return nil
	}
	return []lifecycle.Runnable{lifecycle.Func(func(ctx context.Context) error { return eng.Warm(ctx, iso.Rules(files.Rules)) })}
}
