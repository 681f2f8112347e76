package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	cgdiscovery "k8s.io/client-go/discovery"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/validate"
)

// resourceFlags choose what resource names resolve against: the built-in
// table of a standard API server plus --crd files, or with --kubeconfig or
// --context a cluster's discovery (plus --crd files).
type resourceFlags struct {
	crds    []string
	cluster clusterFlags
}

func (r *resourceFlags) register(fs *flagSet) {
	fs.ListVarP(&r.crds, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.cluster.Register(fs)
}

// live reports whether names resolve against a cluster.
func (r *resourceFlags) live() bool { return r.cluster.Named() }

// mapper returns the resolver of resource names.
func (r *resourceFlags) mapper(ctx context.Context) (*restmapper.Mapper, error) {
	var resources []apiresource.Resource
	if r.live() {
		cfg, _, err := r.cluster.Load(userAgent())
		if err != nil {
			return nil, err
		}
		dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, &clusterError{Err: err}
		}
		cache := discovery.New(dc, discovery.Options{})
		if err := cache.Refresh(ctx); err != nil {
			return nil, &clusterError{Err: fmt.Errorf("discover the API of %s: %w", cfg.Host, err)}
		}
		resources = cache.Snapshot().Resources
	}
	mapper, errs := validate.NewMapper(resources, r.crds)
	if len(errs) > 0 {
		return nil, &invalidError{errs}
	}
	return mapper, nil
}

func validateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var files []string
	var res resourceFlags
	fs := commandFlags("validate", stdout)
	fs.ListVarP(&files, "filename", "f", "rule file or directory (repeatable)")
	res.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	files = append(files, fs.Args()...)
	if len(files) == 0 {
		return &usageError{Msg: "validate: no rule files: use -f FILE|DIR"}
	}
	files, crds := validate.Inputs(files)
	res.crds = append(res.crds, crds...)
	mapper, err := res.mapper(ctx)
	if err != nil {
		return err
	}
	// Loading, compiling and resolving may take long on big inputs; a
	// signal ends validate at once.
	type checked struct {
		*validate.Result
		err error
	}
	c, err := lifecycle.Interruptible(ctx, "validate", func() checked {
		r, err := validate.Check(ctx, files, mapper)
		return checked{r, err}
	})
	if err == nil {
		err = c.err
	}
	if err != nil {
		return err
	}
	for _, p := range c.Problems {
		fmt.Fprintln(stderr, p)
	}
	if c.NotFound && !res.live() {
		fmt.Fprintln(stderr, "hint: custom resources resolve with --crd FILE, or against a cluster with --kubeconfig/--context")
	}
	summary, ok := c.Summary()
	if !ok {
		return &invalidError{errors.New(summary)}
	}
	fmt.Fprintln(stdout, summary)
	return nil
}
