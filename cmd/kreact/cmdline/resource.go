package cmdline

import (
	"context"
	"errors"
	"fmt"

	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/validate"
)

// ResourceFlags choose what resource names resolve against, for kreact
// validate and kreact rbac: the built-in table of a standard API server
// plus --crd files, or with --kubeconfig or --context a cluster's
// discovery (plus --crd files).
type ResourceFlags struct {
	CRDs    []string
	Cluster ClusterFlags
}

// Register adds --crd and the cluster flags to fs.
func (r *ResourceFlags) Register(fs *FlagSet) {
	fs.ListVarP(&r.CRDs, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.Cluster.Register(fs)
}

// Live reports whether names resolve against a cluster.
func (r *ResourceFlags) Live() bool { return r.Cluster.Named() }

// Mapper returns the resolver of resource names. A cluster that cannot be
// reached is a ClusterError; problems in the CRD files are returned as a
// diag.ErrorList.
func (r *ResourceFlags) Mapper(ctx context.Context, userAgent string) (*restmapper.Mapper, error) {
	var resources []apiresource.Resource
	if r.Live() {
		cfg, _, err := r.Cluster.Load(userAgent)
		if err != nil {
			return nil, err
		}
		dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, &ClusterError{Err: err}
		}
		cache := discovery.New(dc, discovery.Options{})
		if err := cache.Refresh(ctx); err != nil {
			return nil, &ClusterError{Err: fmt.Errorf("discover the API of %s: %w", cfg.Host, err)}
		}
		resources = cache.Snapshot().Resources
	}
	mapper, errs := validate.NewMapper(resources, r.CRDs)
	if len(errs) > 0 {
		return nil, errs
	}
	return mapper, nil
}

// Inputs sorts paths into rule files and CRD files (validate.Inputs),
// adds the CRD files to r, and returns the rule files and the resolver
// of resource names (Mapper); a problem in a CRD file is an
// InvalidError.
func (r *ResourceFlags) Inputs(ctx context.Context, paths []string, userAgent string) ([]string, *restmapper.Mapper, error) {
	files, crds := validate.Inputs(paths)
	r.CRDs = append(r.CRDs, crds...)
	m, err := r.Mapper(ctx, userAgent)
	var list diag.ErrorList
	if errors.As(err, &list) {
		return nil, nil, &InvalidError{err}
	}
	return files, m, err
}

// Client returns the client of the cluster that r names (Live); a
// cluster that cannot be configured is a ClusterError.
func (r *ResourceFlags) Client(userAgent string) (dynamic.Interface, error) {
	cfg, _, err := r.Cluster.Load(userAgent)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, &ClusterError{err}
	}
	return client, nil
}
