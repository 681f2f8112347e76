package main

import (
	"context"
	"io"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/lifecycle"
)

func watchCmd(ctx context.Context, o *cmdline.WatchOptions, stdout, stderr io.Writer) error {
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	stack, namespace, err := o.Cluster.Connect(ctx, userAgent(), logger, clientstack.New)
	if err != nil {
		return err
	}
	t := tail.New(stack.Mapper, stack.Informers, stack.Discovery, tail.Options{
		Namespace: cmdline.NamespaceFor(o.Namespace, o.AllNamespaces, namespace), LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector,
		Format: o.Output, Out: stdout, Logger: logger,
	})
	if err := t.Watch(o.Refs); err != nil {
		return &cmdline.InvalidError{Err: err}
	}
	return lifecycle.Layers{stack, t}.Start(ctx)
}
