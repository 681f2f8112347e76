package cmdline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/clientstack"
)

func TestClientLimitFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		qps       float32
		burst     int
		wantUsage bool
	}{
		{name: "defaults", qps: DefaultQPS, burst: DefaultBurst},
		{name: "set", args: []string{"--kube-api-qps", "500", "--kube-api-burst", "1000"}, qps: 500, burst: 1000},
		{name: "no client-side limit", args: []string{"--kube-api-qps=-1"}, qps: -1, burst: DefaultBurst},
		{name: "zero qps", args: []string{"--kube-api-qps", "0"}, wantUsage: true},
		{name: "negative qps other than -1", args: []string{"--kube-api-qps=-5"}, wantUsage: true},
		{name: "zero burst", args: []string{"--kube-api-burst", "0"}, wantUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c ClusterFlags
			fs := NewFlagSet("test", "test", "test")
			c.Register(fs)
			if err := fs.Parse(append([]string{"--kubeconfig", kubeconfig}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := c.Load("kreact/test")
			var usage *UsageError
			if tt.wantUsage {
				if !errors.As(err, &usage) {
					t.Fatalf("load = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.QPS != tt.qps || cfg.Burst != tt.burst {
				t.Errorf("QPS/Burst = %v/%v, want %v/%v", cfg.QPS, cfg.Burst, tt.qps, tt.burst)
			}
			if c.Source != kubeconfig {
				t.Errorf("source = %q, want %q", c.Source, kubeconfig)
			}
		})
	}
}

// Connect dials with the config the flags load, sending the user agent
// and logging to the logger it is given; a server that cannot be reached
// is a ClusterError, and a bad limit a UsageError, dialling nothing.
func TestClusterFlagsConnect(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	c := ClusterFlags{Kubeconfig: unreachableKubeconfig(t), QPS: DefaultQPS, Burst: DefaultBurst}
	var dialled *rest.Config
	var opts clientstack.Options
	want := &clientstack.Stack{}
	stack, _, err := c.Connect(t.Context(), "kreact/test", logger, func(_ context.Context, cfg *rest.Config, o clientstack.Options) (*clientstack.Stack, error) {
		dialled, opts = cfg, o
		return want, nil
	})
	if err != nil || stack != want || dialled == nil || dialled.UserAgent != "kreact/test" || opts.Logger != logger {
		t.Errorf("Connect = %v, %v; dialled %+v with %+v; want the stack dialled with the user agent and the logger", stack, err, dialled, opts)
	}
	if _, _, err := c.Connect(t.Context(), "kreact/test", logger, clientstack.Connect); ExitCode(err, io.Discard) != ExitCluster {
		t.Errorf("Connect to a server that cannot be reached = %v, want a ClusterError", err)
	}
	c.Burst = 0
	if _, _, err := c.Connect(t.Context(), "kreact/test", logger, func(context.Context, *rest.Config, clientstack.Options) (*clientstack.Stack, error) {
		t.Error("dialled with --kube-api-burst 0")
		return nil, nil
	}); ExitCode(err, io.Discard) != ExitUsage {
		t.Errorf("Connect with --kube-api-burst 0 = %v, want a UsageError", err)
	}
}
