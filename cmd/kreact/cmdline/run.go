package cmdline

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/isolation"
	"github.com/kreact/kreact/replica"
)

// RunOptions are kreact run's flags.
type RunOptions struct {
	Files []string
	// IsolatedMetrics is the metrics address of the isolated rules'
	// process: each process reads the flag, and that one serves it.
	IsolatedMetrics string
	// IsolateMisbehaving moves a rule whose call hogged the process to
	// the isolated rules' process.
	IsolateMisbehaving bool
	DryRun             bool
	// RuleObjects runs the cluster's Rule and ClusterRule objects too
	// (package ruleobjects).
	RuleObjects bool
	// StatusInterval is ruleobjects.Options.Refresh.
	StatusInterval time.Duration
	Tenants        TenantFlags
	ReloadInterval time.Duration
	Cluster        ClusterFlags
	Log            LogFlags
	Serve          ServeFlags
	Leader         LeaderFlags
	Shards         ShardFlags
	Admission      AdmissionFlags
	// AdmissionConfig is what Admission describes, set by Validate when
	// the admission server listens.
	AdmissionConfig admission.Options

	args []string
}

// AddFlags registers kreact run's flags on fs.
func (o *RunOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory (repeatable)")
	fs.BoolVarP(&o.RuleObjects, "rule-objects", "", false, "also run the cluster's Rule and ClusterRule objects (kubectl apply a rule; its CRDs are in deploy/crds), with their status")
	fs.DurationVar(&o.StatusInterval, "status-interval", 30*time.Second, "with --rule-objects, how often a rule object's status is brought up to date when only its counts changed")
	fs.BoolVarP(&o.DryRun, "dry-run", "", false, "send every action with dryRun=All and log it instead of changing the cluster")
	fs.DurationVar(&o.ReloadInterval, "reload-interval", 2*time.Second, "how often to check rule files for changes (0 disables reloading)")
	fs.StringVarP(&o.IsolatedMetrics, "isolated-metrics-bind-address", "", "",
		"address for the /metrics, /healthz and /readyz of the process that runs the isolated rules (spec.isolate, and those moved for misbehaving), e.g. :8082 (empty disables)")
	fs.BoolVarP(&o.IsolateMisbehaving, "isolate-misbehaving", "", true,
		"stop a call that computes for 50ms of CPU, and move a rule to the isolated rules' process when one of its calls is stopped so, or at its timeout or memory limit while computing, until its file changes")
	o.Cluster.Register(fs)
	o.Log.Register(fs)
	o.Serve.Register(fs)
	o.Leader.Register(fs)
	o.Shards.Register(fs)
	o.Admission.RegisterServe(fs)
	o.Tenants.Register(fs)
}

// Complete keeps the positional arguments, which kreact run refuses.
func (o *RunOptions) Complete(args []string) { o.args = args }

// Validate checks the flags. Bad certificate files are found here, before
// anything starts: a missing one, or a key that does not match its
// certificate, is an InvalidError.
func (o *RunOptions) Validate() error {
	if err := o.Shards.Validate(o.Leader.Enabled); err != nil {
		return err
	}
	if err := o.Tenants.Validate(); err != nil {
		return err
	}
	if len(o.Files) == 0 && !o.RuleObjects {
		return &UsageError{Msg: "run: no rules: use -f FILE|DIR, --rule-objects, or both"}
	}
	if len(o.args) > 0 {
		return &UsageError{Msg: fmt.Sprintf("run: unexpected argument %q", o.args[0])}
	}
	if a := o.IsolatedMetrics; a != "" && (a == o.Serve.MetricsAddr || a == o.Serve.HealthAddr) {
		return &UsageError{Msg: fmt.Sprintf("run: --isolated-metrics-bind-address %s is already this process's address", a)}
	}
	a := &o.Admission
	if a.Addr == "" {
		return nil
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return &UsageError{Msg: "run: --admission-cert-file and --admission-key-file go together"}
	}
	if a.CertFile != "" {
		if _, err := admission.LoadCertificates(a.CertFile, a.KeyFile); err != nil {
			return &InvalidError{err}
		}
	}
	var err error
	o.AdmissionConfig, err = a.ServeOptions("run")
	return err
}

// Isolated reports whether role is the isolated rules' process (package
// isolation), and makes o its flags if so: it takes no part in leader
// election and serves its endpoints on --isolated-metrics-bind-address
// only.
func (o *RunOptions) Isolated(role isolation.Role) bool {
	if role.Child {
		o.Leader = LeaderFlags{}
		o.Serve = ServeFlags{MetricsAddr: o.IsolatedMetrics}
	}
	return role.Child
}

// TraceSize is the rules' trace: kept for kreact explain, none without
// its endpoint.
func (o *RunOptions) TraceSize() delivery.TraceSize {
	if o.Serve.ExplainAddr == "" {
		return delivery.TraceSize{}
	}
	return delivery.DefaultTraceSize
}

// Replica is the options of this replica (replica.Join): its shard
// membership with --shards, its election with --leader-elect, and parent,
// in the isolated rules' process, the replica it is part of.
func (o *RunOptions) Replica(parent string, logger *slog.Logger) replica.Options {
	opts := replica.Options{ShardKey: o.Shards.Key, Elect: o.Leader.Enabled, Parent: parent}
	if o.Shards.Enabled {
		m := o.Shards.MembershipOptions(logger)
		opts.Shards = &m
	}
	return opts
}
