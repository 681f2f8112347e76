package clientstack

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/restmapper"
)

// Stack is a running watch stack for one cluster.
type Stack struct {
	Config *rest.Config
	// REST is the client Client is built on; actions write through it.
	REST   rest.Interface
	Client dynamic.Interface
	// Metadata lists and watches objects' metadata only: the informers of
	// rules that read nothing else use it.
	Metadata  metadata.Interface
	Discovery *discovery.Cache
	Mapper    *restmapper.Mapper
	Informers *dynamicinformer.Manager

	// informerREST is the informers' REST client (see
	// dynamicinformer.Options.REST).
	informerREST rest.Interface

	logger *slog.Logger
	wg     sync.WaitGroup
	errs   chan error
}

// Options configure a Stack.
type Options struct {
	// Logger receives every component's logs. Nil means slog.Default().
	Logger *slog.Logger
	// Discovery tunes the discovery cache; its Metadata and Logger are set
	// by Start.
	Discovery discovery.Options
	// Informers tunes the informer manager; its Logger and Metadata are
	// set by Start.
	Informers dynamicinformer.Options
}

// Start connects to the cluster, runs the first discovery and starts the
// discovery cache and the informer manager; both stop when ctx ends. Wait
// returns when they have.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	s, err := New(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	s.wg.Go(func() {
		if err := s.Start(ctx); err != nil {
			s.errs <- err
		}
	})
	return s, nil
}

// New connects to the cluster, runs the first discovery and builds the
// informer manager, and starts nothing: Start runs them.
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	s, err := Connect(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	iopts := opts.Informers
	// The manager names itself: component=dynamicinformer.
	iopts.Logger = s.logger
	iopts.Metadata = s.Metadata
	iopts.REST = s.informerREST
	s.Informers = dynamicinformer.New(s.Client, s.Discovery, iopts)
	return s, nil
}

// Start runs the discovery cache and the informer manager of a Stack made
// by New until ctx ends, and returns once both have stopped (a
// lifecycle.Runnable).
func (s *Stack) Start(ctx context.Context) error {
	return lifecycle.Group{lifecycle.Func(s.Discovery.Run), lifecycle.Func(s.Informers.Run)}.Start(ctx)
}

// Connect connects to the cluster and runs one discovery, and starts
// nothing: the returned Stack has no Informers, its discovery is not
// refreshed, and Wait returns at once. It is for a command that resolves
// resource names and makes a few requests, then exits.
func Connect(ctx context.Context, cfg *rest.Config, opts Options) (*Stack, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	rc, err := RESTClient(cfg)
	if err != nil {
		return nil, err
	}
	informerREST, err := dynamicinformer.RESTClient(cfg, rc)
	if err != nil {
		return nil, err
	}
	client := dynamic.New(rc)
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
	return &Stack{
		Config:       cfg,
		REST:         rc,
		Client:       client,
		Metadata:     meta,
		informerREST: informerREST,
		Discovery:    disc,
		Mapper:       restmapper.New(disc, restmapper.Options{Logger: opts.Logger.With("component", "restmapper")}),
		logger:       opts.Logger,
		errs:         make(chan error, 1),
	}, nil
}

// Wait blocks until a stack begun by Start has stopped and returns the
// error of its components.
func (s *Stack) Wait() error {
	s.wg.Wait()
	close(s.errs)
	return <-s.errs
}

// RESTClient returns a REST client for every API path of the cluster, as
// client-go's dynamic client makes for itself (dynamic.New turns it into
// one).
func RESTClient(cfg *rest.Config) (*rest.RESTClient, error) {
	config := dynamic.ConfigFor(cfg)
	// An unversioned client has no base path: requests give absolute ones.
	config.GroupVersion = nil
	config.APIPath = "/"
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	return rest.UnversionedRESTClientForConfigAndClient(config, httpClient)
}
