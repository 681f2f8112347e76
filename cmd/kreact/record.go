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

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/record"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/ruletest"
)

// recordCmd is `kreact record -f RULES RESOURCE [NAME...]`: it runs the
// rules in dry-run against the chosen objects' live changes and writes
// what happened as a kreact test case (package record).
func recordCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cmdline.RecordOptions
	if err := cmdline.Parse(commandFlags("record", stdout), args, &o); err != nil {
		return err
	}
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	files, err := engine.ReadRules(ctx, "record: loading rules", o.Files)
	if err != nil {
		return err
	}
	// kreact test refuses a rule file with errors: so does its recording.
	if files.Err != nil {
		return &cmdline.InvalidError{Err: files.Err}
	}
	if len(files.Rules) == 0 {
		return &cmdline.InvalidError{Err: fmt.Errorf("no rules in %s", strings.Join(o.Files, ", "))}
	}
	dir := "."
	if o.Output != "" {
		dir = filepath.Dir(o.Output)
	}
	rulePaths, err := record.RelativeTo(dir, o.Files)
	if err != nil {
		return err
	}
	crdPaths, err := record.RelativeTo(dir, o.CRDs)
	if err != nil {
		return err
	}
	stack, contextNS, err := connect(ctx, &o.Cluster, logger, kube.New)
	if err != nil {
		return err
	}
	var resources []apiresource.Resource
	for _, ref := range o.Refs {
		res, err := stack.Mapper.Resolve(ref)
		var nf *restmapper.NotFoundError
		switch {
		case errors.As(err, &nf):
			return &cmdline.UsageError{Msg: "record: " + err.Error()}
		case err != nil:
			return &cmdline.InvalidError{Err: err}
		}
		resources = append(resources, res)
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	r, err := record.Run(ctx, stack, files.Rules, resources, record.RunOptions{Refs: o.Refs, Logger: logger,
		Options: record.Options{Names: o.Names, Namespace: cmdline.NamespaceFor(o.Namespace, o.AllNamespaces, contextNS), LabelSelector: o.LabelSelector}})
	var load *record.LoadError
	if errors.As(err, &load) {
		return &cmdline.InvalidError{Err: err}
	}
	if err != nil {
		return err
	}
	r.Rules, r.CRDs = rulePaths, crdPaths
	r.Description = fmt.Sprintf("recorded by kreact record %s from %s", strings.Join(args, " "), stack.Config.Host)
	data, err := r.Case()
	if err != nil {
		return err
	}
	logger.Info("recorded", "changes", len(r.Changes), "actions", len(r.Actions), "errors", len(r.Errors), "output", o.Output)
	if o.Output == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := os.WriteFile(o.Output, data, 0o644); err != nil {
		return err
	}
	// The case is checked as kreact test will run it: what the replay
	// cannot reproduce (see package record) is said now, not found later.
	var report bytes.Buffer
	sum, err := ruletest.Run(context.WithoutCancel(ctx), []string{o.Output}, &report, ruletest.Options{})
	if err != nil || sum.Failed > 0 {
		logger.Warn("the case does not replay as recorded: did the rules watch or read objects not recorded, or were changes coalesced? See `kreact record --help`", "file", o.Output, "error", err)
		_, err = io.Copy(stderr, &report)
		return err
	}
	logger.Info("replayed offline with kreact test: the same actions", "file", o.Output)
	return nil
}
