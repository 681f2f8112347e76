package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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

// ErrNoConfig means no kubeconfig was found and kreact is not in a pod.
var ErrNoConfig = errors.New("no kubeconfig found: use --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod")

// Load returns the client configuration and the default namespace of the
// selected context ("default" when it names none, or the pod's namespace in
// a cluster).
func Load(f Flags) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", ErrNoConfig
		}
		return nil, "", fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig namespace: %w", err)
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
	return cfg, ns, nil
}
