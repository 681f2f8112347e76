package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/restmapper"
)

// Stack is a running watch stack for one cluster.
type Stack struct {
	Config    *rest.Config
	Client    dynamic.Interface
	Discovery *discovery.Cache
	Mapper    *restmapper.Mapper
	Informers *dynamicinformer.Manager

	wg   sync.WaitGroup
	errs chan error
}

// Options configure a Stack.
type Options struct {
	// Logger receives every component's logs. Nil means slog.Default().
	Logger *slog.Logger
	// Discovery tunes the discovery cache; its Metadata and Logger are set
	// by Start.
	Discovery discovery.Options
	// Informers tunes the informer manager; its Logger is set by Start.
	Informers dynamicinformer.Options
}

// Start connects to the cluster, runs the first discovery and starts the
// discovery cache and the informer manager; both stop when ctx ends. Wait
// returns when they have.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dopts := opts.Discovery
	dopts.Metadata = meta
	dopts.Logger = opts.Logger.With("component", "discovery")
	disc := discovery.New(dc, dopts)
	if err := disc.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("discover the API of %s: %w", cfg.Host, err)
	}
	iopts := opts.Informers
	// The manager names itself: component=dynamicinformer.
	iopts.Logger = opts.Logger
	s := &Stack{
		Config:    cfg,
		Client:    client,
		Discovery: disc,
		Mapper:    restmapper.New(disc, restmapper.Options{Logger: opts.Logger.With("component", "restmapper")}),
		Informers: dynamicinformer.New(client, disc, iopts),
		errs:      make(chan error, 2),
	}
	for _, run := range []func(context.Context) error{disc.Run, s.Informers.Run} {
		s.wg.Go(func() {
			if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				s.errs <- err
			}
		})
	}
	return s, nil
}

// Wait blocks until the stack has stopped and returns the first error any
// component returned.
func (s *Stack) Wait() error {
	s.wg.Wait()
	close(s.errs)
	return <-s.errs
}
