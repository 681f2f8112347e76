package cmdline

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/internal/kubeconfig"
)

// ClusterFlags are the connection flags shared with kubectl, and the
// client-side rate limits of kube-controller-manager and friends.
type ClusterFlags struct {
	Kubeconfig, Context string
	QPS                 float64
	Burst               int

	// Source is where the last Load found the configuration: a
	// kubeconfig file or kubeconfig.InCluster.
	Source string
}

// The default client limits. client-go's own (5 and 10) starve a reaction
// engine under a burst of changes: at 200 writes/s a rule's patches would
// wait on the client, not on its own rateLimit.
const (
	DefaultQPS   = 100
	DefaultBurst = 200
)

// Register adds --kubeconfig, --context, --kube-api-qps and
// --kube-api-burst to fs.
func (c *ClusterFlags) Register(fs *FlagSet) {
	fs.StringVarP(&c.Kubeconfig, "kubeconfig", "", "", "path to the kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	fs.StringVarP(&c.Context, "context", "", "", "kubeconfig context to use")
	fs.Float64Var(&c.QPS, "kube-api-qps", DefaultQPS, "requests per second kreact sends to the API server, all rules together (-1: no client-side limit; the server's priority and fairness still applies)")
	fs.IntVar(&c.Burst, "kube-api-burst", DefaultBurst, "requests kreact may send at once above --kube-api-qps")
}

// Named reports whether --kubeconfig or --context was given.
func (c *ClusterFlags) Named() bool { return c.Kubeconfig != "" || c.Context != "" }

// Load resolves the flags as kubectl does and returns the client config,
// which sends userAgent, and the context's namespace; a failure is a
// ClusterError, a bad limit a UsageError.
func (c *ClusterFlags) Load(userAgent string) (*rest.Config, string, error) {
	if c.QPS == 0 || (c.QPS < 0 && c.QPS != -1) {
		return nil, "", &UsageError{fmt.Sprintf("--kube-api-qps %v: want a positive number, or -1 for no limit", c.QPS)}
	}
	if c.Burst < 1 {
		return nil, "", &UsageError{fmt.Sprintf("--kube-api-burst %d: want at least 1", c.Burst)}
	}
	l, err := kubeconfig.Load(kubeconfig.Flags{
		Kubeconfig: c.Kubeconfig, Context: c.Context, UserAgent: userAgent,
		QPS: float32(c.QPS), Burst: c.Burst,
	})
	if err != nil {
		return nil, "", &ClusterError{err}
	}
	c.Source = l.Source
	return l.Config, l.Namespace, nil
}

// Connect dials the cluster the flags name with dial (clientstack.New, or
// clientstack.Connect for a stack without informers), its client config
// sending userAgent and logging to logger, and returns the stack and the
// namespace of the kubeconfig's context. A cluster that cannot be
// configured or reached is a ClusterError, a bad limit a UsageError (Load).
func (c *ClusterFlags) Connect(ctx context.Context, userAgent string, logger *slog.Logger, dial func(context.Context, *rest.Config, clientstack.Options) (*clientstack.Stack, error)) (*clientstack.Stack, string, error) {
	cfg, namespace, err := c.Load(userAgent)
	if err != nil {
		return nil, "", err
	}
	stack, err := dial(ctx, cfg, clientstack.Options{Logger: logger})
	if err != nil {
		return nil, "", &ClusterError{Err: err}
	}
	return stack, namespace, nil
}
