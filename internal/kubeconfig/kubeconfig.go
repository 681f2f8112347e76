package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Flags are the connection flags kreact shares with kubectl.
type Flags struct {
	// Kubeconfig is --kubeconfig; empty means $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context is --context; empty means the current context.
	Context string
	// UserAgent is sent with every request; empty means client-go's default.
	UserAgent string
	// QPS and Burst are the client-side rate limits. Zero means 50 and
	// 100; a negative QPS means no client-side limit.
	QPS   float32
	Burst int
}

// InCluster is the Source of a configuration taken from the pod's service
// account (KUBERNETES_SERVICE_HOST and /var/run/secrets/kubernetes.io/serviceaccount).
const InCluster = "in-cluster"

// Loaded is the configuration Load found.
type Loaded struct {
	// Config is the client configuration.
	Config *rest.Config
	// Namespace is the selected context's namespace, "default" when it
	// names none, or the pod's namespace in a cluster.
	Namespace string
	// Source is the kubeconfig file that defines the selected context's
	// cluster, or InCluster.
	Source string
}

// ErrNoConfig means no kubeconfig was found and kreact is not in a pod.
var ErrNoConfig = errors.New("no kubeconfig found: use --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod")

// Load finds the client configuration as kubectl does.
func Load(f Flags) (*Loaded, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, ErrNoConfig
		}
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig namespace: %w", err)
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	if ns == "" {
		ns = "default"
	}
	cfg.QPS, cfg.Burst = f.QPS, f.Burst
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	if f.UserAgent != "" {
		cfg.UserAgent = f.UserAgent
	}
	return &Loaded{Config: cfg, Namespace: ns, Source: source(raw, f.Context, cfg.Host)}, nil
}

// source names the file whose cluster the client uses. clientcmd falls back
// to the service account, without saying so, when the kubeconfig files are
// missing or hold only defaults: then no file's cluster has the host used.
func source(raw clientcmdapi.Config, context, host string) string {
	if context == "" {
		context = raw.CurrentContext
	}
	if c, ok := raw.Contexts[context]; ok {
		if cl, ok := raw.Clusters[c.Cluster]; ok && cl.Server == host {
			return cl.LocationOfOrigin
		}
	}
	return InCluster
}
