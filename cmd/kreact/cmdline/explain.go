package cmdline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/validate"
)

// ExplainOptions are kreact explain's flags and arguments.
type ExplainOptions struct {
	Namespace, Output, Address, Rule string
	// Resource and Name are the object asked about.
	Resource, Name string
	// Cluster is the API server that resolves Resource before kreact
	// is asked.
	Cluster ClusterFlags

	args []string
}

// AddFlags registers kreact explain's flags on fs.
func (o *ExplainOptions) AddFlags(fs *FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "the object's namespace (default: default, for a namespaced resource)")
	fs.StringVarP(&o.Output, "output", "o", "", "yaml or json (default: text)")
	fs.StringVarP(&o.Address, "address", "", "", "the --explain-address of the kreact run to ask (default: $"+explain.AddressEnv+", else "+explain.DefaultAddress+")")
	fs.StringVarP(&o.Rule, "rule", "", "", "answer for this rule only")
	o.Cluster.Register(fs)
}

// Complete takes the resource and the name, or kubectl's TYPE/NAME.
func (o *ExplainOptions) Complete(args []string) {
	if len(args) == 1 {
		if r, n, ok := strings.Cut(args[0], "/"); ok {
			args = []string{r, n}
		}
	}
	if o.args = args; len(args) >= 2 {
		o.Resource, o.Name = args[0], args[1]
	}
}

// Validate checks the output format and the arguments.
func (o *ExplainOptions) Validate() error {
	switch {
	case len(o.args) < 2:
		return &UsageError{Msg: "explain: name the resource and the object, e.g. `kreact explain deploy web -n shop`"}
	case len(o.args) > 2:
		return &UsageError{Msg: fmt.Sprintf("explain: unexpected argument %q", o.args[2])}
	case o.Output != "" && o.Output != "yaml" && o.Output != "json":
		return &UsageError{Msg: fmt.Sprintf("explain: -o %s: want yaml or json", o.Output)}
	}
	return nil
}

// explainDiscoveryTimeout bounds the discovery that resolves the resource
// before kreact is asked.
const explainDiscoveryTimeout = 10 * time.Second

// Resolve resolves Resource against the API server, its client config
// sending userAgent, before kreact is asked, so that a misspelt one is a
// UsageError with the names that come close whether or not a kreact
// answers; it returns the resource as the cluster names it
// ("deployments.apps"). Without --kubeconfig or --context, a cluster that
// cannot be configured or reached leaves the name to the kreact asked,
// which resolves it against the same API server: Resolve returns Resource
// as it is. With them, it is a ClusterError.
func (o *ExplainOptions) Resolve(ctx context.Context, userAgent string) (string, error) {
	cfg, _, err := o.Cluster.Load(userAgent)
	var cluster *ClusterError
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
		return "", &ClusterError{Err: err}
	}
	mapper := restmapper.New(restmapper.NewStatic(resources), restmapper.Options{})
	res, err := explain.Resolve(mapper.Resolve, o.Resource)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return "", &UsageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return "", &InvalidError{Err: fmt.Errorf("explain: %w", err)}
	}
	return res.GVR.GroupResource().String(), nil
}
