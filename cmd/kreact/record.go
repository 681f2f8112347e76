package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/record"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/ruletest"
)

type recordFlags struct {
	files, crds   []string
	namespace     string
	allNamespaces bool
	labelSelector string
	output        string
	duration      time.Duration
	cluster       clusterFlags
	log           logFlags
}

// recordCmd is `kreact record -f RULES RESOURCE [NAME...]`: it runs the
// rules in dry-run against the chosen objects' live changes and writes
// what happened as a kreact test case (package record).
func recordCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f recordFlags
	fs := commandFlags("record", stdout)
	fs.ListVarP(&f.files, "filename", "f", "rule file or directory (repeatable)")
	fs.ListVarP(&f.crds, "crd", "", "file of CustomResourceDefinitions for the case's spec.crds (repeatable)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "namespace to record (default: the context's namespace)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "record all namespaces")
	fs.StringVarP(&f.labelSelector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVarP(&f.output, "output", "o", "", "the case file to write (default: stdout)")
	fs.DurationVar(&f.duration, "for", 0, "stop recording after this long (default: at Ctrl-C)")
	f.cluster.Register(fs)
	f.log.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(f.files) == 0 {
		return &usageError{Msg: "record: no rule files: use -f FILE|DIR"}
	}
	if fs.NArg() == 0 {
		return &usageError{Msg: "record: name a resource, e.g. `kreact record -f rules/ cm web -n shop`"}
	}
	// RESOURCE[,RESOURCE...] [NAME...], as kubectl get takes them.
	refs, names := tail.Refs(fs.Args()[:1]), fs.Args()[1:]
	if _, err := labels.Parse(f.labelSelector); err != nil {
		return &usageError{Msg: fmt.Sprintf("record: -l %q: %v", f.labelSelector, err)}
	}
	logger, err := f.log.Logger(stderr)
	if err != nil {
		return err
	}
	files, err := engine.ReadRules(ctx, "record: loading rules", f.files)
	if err != nil {
		return err
	}
	// kreact test refuses a rule file with errors: so does its recording.
	if files.Err != nil {
		return &invalidError{files.Err}
	}
	if len(files.Rules) == 0 {
		return &invalidError{fmt.Errorf("no rules in %s", strings.Join(f.files, ", "))}
	}
	dir := "."
	if f.output != "" {
		dir = filepath.Dir(f.output)
	}
	rulePaths, err := record.RelativeTo(dir, f.files)
	if err != nil {
		return err
	}
	crdPaths, err := record.RelativeTo(dir, f.crds)
	if err != nil {
		return err
	}
	cfg, contextNS, err := f.cluster.Load(userAgent())
	if err != nil {
		return err
	}
	namespace := namespaceFor(f.namespace, f.allNamespaces, contextNS)

	stack, err := kube.New(ctx, cfg, kube.Options{Logger: logger})
	if err != nil {
		return &clusterError{Err: err}
	}
	var resources []apiresource.Resource
	for _, ref := range refs {
		res, err := stack.Mapper.Resolve(ref)
		var nf *restmapper.NotFoundError
		switch {
		case errors.As(err, &nf):
			return &usageError{Msg: "record: " + err.Error()}
		case err != nil:
			return &invalidError{err}
		}
		resources = append(resources, res)
	}
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	r, err := record.Run(ctx, stack, files.Rules, resources, record.RunOptions{Refs: refs, Logger: logger,
		Options: record.Options{Names: names, Namespace: namespace, LabelSelector: f.labelSelector}})
	var load *record.LoadError
	if errors.As(err, &load) {
		return &invalidError{err}
	}
	if err != nil {
		return err
	}
	r.Rules, r.CRDs = rulePaths, crdPaths
	r.Description = fmt.Sprintf("recorded by kreact record %s from %s", strings.Join(args, " "), cfg.Host)
	data, err := r.Case()
	if err != nil {
		return err
	}
	logger.Info("recorded", "changes", len(r.Changes), "actions", len(r.Actions), "errors", len(r.Errors), "output", f.output)
	if f.output == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := os.WriteFile(f.output, data, 0o644); err != nil {
		return err
	}
	// The case is checked as kreact test will run it: what the replay
	// cannot reproduce (see package record) is said now, not found later.
	var report bytes.Buffer
	sum, err := ruletest.Run(context.WithoutCancel(ctx), []string{f.output}, &report, ruletest.Options{})
	if err != nil || sum.Failed > 0 {
		logger.Warn("the case does not replay as recorded: did the rules watch or read objects not recorded, or were changes coalesced? See `kreact record --help`", "file", f.output, "error", err)
		_, err = io.Copy(stderr, &report)
		return err
	}
	logger.Info("replayed offline with kreact test: the same actions", "file", f.output)
	return nil
}
