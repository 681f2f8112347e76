package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u, namespace: team-b}
current-context: ctx-a
`

func writeConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	path := writeConfig(t)
	tests := []struct {
		name             string
		flags            Flags
		env              string
		wantHost, wantNS string
	}{
		{name: "flag, current context", flags: Flags{Kubeconfig: path}, wantHost: "https://a.example:6443", wantNS: "default"},
		{name: "flag and --context", flags: Flags{Kubeconfig: path, Context: "ctx-b"}, wantHost: "https://b.example:6443", wantNS: "team-b"},
		{name: "KUBECONFIG", env: path, flags: Flags{Context: "ctx-b"}, wantHost: "https://b.example:6443", wantNS: "team-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			l, err := Load(tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			cfg := l.Config
			if cfg.Host != tt.wantHost || l.Namespace != tt.wantNS {
				t.Errorf("Load = %s, %s; want %s, %s", cfg.Host, l.Namespace, tt.wantHost, tt.wantNS)
			}
			if l.Source != path {
				t.Errorf("Source = %q, want %q", l.Source, path)
			}
			if cfg.QPS != 50 || cfg.Burst != 100 {
				t.Errorf("QPS/Burst = %v/%v, want defaults 50/100", cfg.QPS, cfg.Burst)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := Load(Flags{}); !errors.Is(err, ErrNoConfig) {
		t.Errorf("Load without any config = %v, want ErrNoConfig", err)
	}
	if _, err := Load(Flags{Kubeconfig: writeConfig(t), Context: "nope"}); err == nil {
		t.Error("Load with an unknown context succeeded")
	}
}

// TestSource covers the answers of source that Load cannot reach outside a
// pod (the image test in deploy/ runs Load in one).
func TestSource(t *testing.T) {
	raw := clientcmdapi.Config{
		CurrentContext: "a",
		Clusters: map[string]*clientcmdapi.Cluster{
			"a": {Server: "https://a.example:6443", LocationOfOrigin: "/home/u/.kube/config"},
			"b": {Server: "https://b.example:6443", LocationOfOrigin: "/etc/kube/b.yaml"},
		},
		Contexts: map[string]*clientcmdapi.Context{
			"a": {Cluster: "a"},
			"b": {Cluster: "b"},
		},
	}
	tests := []struct {
		name          string
		raw           clientcmdapi.Config
		context, host string
		want          string
	}{
		{name: "current context", raw: raw, host: "https://a.example:6443", want: "/home/u/.kube/config"},
		{name: "chosen context from another file", raw: raw, context: "b", host: "https://b.example:6443", want: "/etc/kube/b.yaml"},
		{name: "no kubeconfig", raw: clientcmdapi.Config{}, host: "https://10.0.0.1:443", want: InCluster},
		{name: "kubeconfig of defaults only, service account used", raw: raw, host: "https://10.0.0.1:443", want: InCluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := source(tt.raw, tt.context, tt.host); got != tt.want {
				t.Errorf("source = %q, want %q", got, tt.want)
			}
		})
	}
}
