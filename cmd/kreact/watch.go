package main

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/lifecycle"
)

type watchFlags struct {
	namespace     string
	allNamespaces bool
	labelSelector string
	fieldSelector string
	output        string
	cluster       clusterFlags
	log           logFlags
}

func watchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f watchFlags
	fs := commandFlags("watch", stdout)
	fs.StringVarP(&f.namespace, "namespace", "n", "", "namespace to watch (default: the context's namespace)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "watch all namespaces")
	fs.StringVarP(&f.labelSelector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVarP(&f.fieldSelector, "field-selector", "", "", "field selector, e.g. metadata.name=x")
	fs.StringVarP(&f.output, "output", "o", "", "output format: (default) lines, wide, json or yaml")
	f.cluster.Register(fs)
	f.log.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{Msg: "watch: name at least one resource, e.g. `kreact watch deploy,cm -A`"}
	}
	refs := tail.Refs(fs.Args())
	switch f.output {
	case "", "wide", "json", "yaml":
	default:
		return &usageError{Msg: fmt.Sprintf("watch: -o %q: want wide, json or yaml", f.output)}
	}
	if _, err := labels.Parse(f.labelSelector); err != nil {
		return &invalidError{fmt.Errorf("-l %q: %w", f.labelSelector, err)}
	}
	if _, err := fields.ParseSelector(f.fieldSelector); err != nil {
		return &invalidError{fmt.Errorf("--field-selector %q: %w", f.fieldSelector, err)}
	}
	logger, err := f.log.Logger(stderr)
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
	t := tail.New(stack.Mapper, stack.Informers, stack.Discovery, tail.Options{
		Namespace: namespace, LabelSelector: f.labelSelector, FieldSelector: f.fieldSelector,
		Format: f.output, Out: stdout, Logger: logger,
	})
	if err := t.Watch(refs); err != nil {
		return &invalidError{err}
	}
	return lifecycle.Layers{stack, t}.Start(ctx)
}
