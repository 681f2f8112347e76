package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/validate"
)

func explainCmd(ctx context.Context, o *cmdline.ExplainOptions, stdout, _ io.Writer) error {
	ref, err := explainResource(ctx, o)
	if err != nil {
		return err
	}
	addr := explain.Address(o.Address, os.Getenv)
	obj, err := explain.Ask(ctx, addr, ref, o.Namespace, o.Name)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return &cmdline.UsageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return fmt.Errorf("explain: %w", err)
	}
	if o.Rule != "" && !obj.Only(o.Rule) {
		return fmt.Errorf("explain: rule %q is not loaded in the kreact at %s (loaded: %s)", o.Rule, addr, strings.Join(obj.RuleNames(), ", "))
	}
	if err := obj.Write(stdout, o.Output); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	return nil
}

// explainDiscoveryTimeout bounds the discovery that resolves the resource
// before kreact is asked.
const explainDiscoveryTimeout = 10 * time.Second

// explainResource resolves the resource named against the API server,
// before kreact is asked, so that a misspelt one is a usage error with
// the names that come close whether or not a kreact answers; it returns
// the resource as the cluster names it ("deployments.apps"). Without
// --kubeconfig or --context, a cluster that cannot be configured or
// reached leaves the name to the kreact asked, which resolves it against
// the same API server.
func explainResource(ctx context.Context, o *cmdline.ExplainOptions) (string, error) {
	cfg, _, err := o.Cluster.Load(userAgent())
	var cluster *cmdline.ClusterError
	switch {
	case errors.As(err, &cluster) && !o.Cluster.Named():
		return o.Resource, nil
	case err != nil:
		return "", err
	}
	dctx, cancel := context.WithTimeout(ctx, explainDiscoveryTimeout)
	defer cancel()
	resources, err := validate.Discover(dctx, cfg)
	switch {
	case err != nil && !o.Cluster.Named():
		return o.Resource, nil
	case err != nil:
		return "", &cmdline.ClusterError{Err: err}
	}
	mapper := restmapper.New(restmapper.NewStatic(resources), restmapper.Options{})
	res, err := explain.Resolve(mapper.Resolve, o.Resource)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return "", &cmdline.UsageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return "", &cmdline.InvalidError{Err: fmt.Errorf("explain: %w", err)}
	}
	return res.GVR.GroupResource().String(), nil
}
