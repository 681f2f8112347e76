package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
			cfg, ns, err := Load(tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || ns != tt.wantNS {
				t.Errorf("Load = %s, %s; want %s, %s", cfg.Host, ns, tt.wantHost, tt.wantNS)
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
	if _, _, err := Load(Flags{}); !errors.Is(err, ErrNoConfig) {
		t.Errorf("Load without any config = %v, want ErrNoConfig", err)
	}
	if _, _, err := Load(Flags{Kubeconfig: writeConfig(t), Context: "nope"}); err == nil {
		t.Error("Load with an unknown context succeeded")
	}
}
