package cmdline

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/validate"
)

// InputFlags are the rule files of kreact validate, rbac and webhooks
// (-f, and the arguments), and what their resource names resolve
// against: the built-in table of a standard API server plus --crd files,
// or with --kubeconfig or --context a cluster's discovery (plus --crd
// files).
type InputFlags struct {
	Files   []string
	CRDs    []string
	Cluster ClusterFlags
}

// Register adds -f, --crd and the cluster flags to fs.
func (r *InputFlags) Register(fs *FlagSet) {
	fs.ListVarP(&r.Files, "filename", "f", "rule file or directory (repeatable)")
	fs.ListVarP(&r.CRDs, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.Cluster.Register(fs)
}

// Complete takes the files named as arguments.
func (r *InputFlags) Complete(args []string) { r.Files = append(r.Files, args...) }

// Check checks that the command cmd is given files.
func (r *InputFlags) Check(cmd string) error {
	if len(r.Files) == 0 {
		return &UsageError{Msg: cmd + ": no rule files: use -f FILE|DIR"}
	}
	return nil
}

// Live reports whether names resolve against a cluster.
func (r *InputFlags) Live() bool { return r.Cluster.Named() }

// Load sorts the files into rule files and CRD files (validate.Inputs),
// and returns the rule files and the resolver of their resource names
// with those CRDs and the --crd files: a standard API server's, or when
// Live the cluster's discovery, whose client config (sending userAgent)
// it returns too, nil otherwise. A cluster that cannot be configured or
// reached is a ClusterError; a CRD file with problems is a diag.ErrorList.
func (r *InputFlags) Load(ctx context.Context, userAgent string) (files []string, mapper *restmapper.Mapper, cfg *rest.Config, err error) {
	files, crds := validate.Inputs(r.Files)
	var resources []apiresource.Resource
	if r.Live() {
		if cfg, _, err = r.Cluster.Load(userAgent); err != nil {
			return nil, nil, nil, err
		}
		if resources, err = validate.Discover(ctx, cfg); err != nil {
			return nil, nil, nil, &ClusterError{Err: err}
		}
	}
	mapper, errs := validate.NewMapper(resources, append(r.CRDs, crds...))
	if len(errs) > 0 {
		return nil, nil, nil, errs
	}
	return files, mapper, cfg, nil
}
