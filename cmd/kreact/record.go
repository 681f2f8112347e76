package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/record"
	"github.com/kreact/kreact/validate"
)

func recordCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cmdline.RecordOptions
	if err := cmdline.Parse(commandFlags("record", stdout), args, &o); err != nil {
		return err
	}
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	rulePaths, crdPaths, err := record.CasePaths(o.Output, o.Files, o.CRDs)
	if err != nil {
		return err
	}
	stack, contextNS, err := o.Cluster.Connect(ctx, userAgent(), logger, clientstack.New)
	if err != nil {
		return err
	}
	rs, err := validate.CheckRunnable(ctx, o.Files, stack.Mapper)
	if err != nil {
		return err
	}
	resources, err := o.Resources(stack.Mapper.Resolve)
	if err != nil {
		return err
	}
	r, err := record.Run(ctx, stack, rs, resources, record.RunOptions{Refs: o.Refs, For: o.Duration, Logger: logger,
		Options: record.Options{Names: o.Names, Namespace: cmdline.NamespaceFor(o.Namespace, o.AllNamespaces, contextNS), LabelSelector: o.LabelSelector}})
	if err != nil {
		return err
	}
	r.Rules, r.CRDs = rulePaths, crdPaths
	r.Description = fmt.Sprintf("recorded by kreact record %s from %s", strings.Join(args, " "), stack.Config.Host)
	return r.Write(ctx, o.Output, stdout, stderr, logger)
}
