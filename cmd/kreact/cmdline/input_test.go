package cmdline

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreact/kreact/diag"
)

// Names resolve against a cluster only with --kubeconfig or --context.
func TestInputFlagsLive(t *testing.T) {
	var r InputFlags
	fs := NewFlagSet("validate", "", "")
	r.Register(fs)
	if err := fs.Parse([]string{"--crd", "../../../examples/crds/backup.yaml"}); err != nil {
		t.Fatal(err)
	}
	if r.Live() {
		t.Error("Live without --kubeconfig or --context")
	}
	r.Cluster.Context = "elsewhere"
	if !r.Live() {
		t.Error("not Live with --context")
	}
}

// Offline, names resolve against the built-in resources and the --crd
// files; a CRD file with problems is invalid input; with --kubeconfig, a
// cluster that cannot be reached is a ClusterError.
func TestInputFlagsLoad(t *testing.T) {
	r := InputFlags{CRDs: []string{"../../../examples/crds/backup.yaml"}}
	_, m, cfg, err := r.Load(t.Context(), "kreact/test")
	if err != nil || cfg != nil {
		t.Fatalf("Load offline = config %v, %v; want no config, no error", cfg, err)
	}
	for _, name := range []string{"deploy", "backups"} {
		if _, err := m.Resolve(name); err != nil {
			t.Errorf("Resolve(%s): %v", name, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.CRDs = []string{bad}
	var list diag.ErrorList
	if _, _, _, err := r.Load(t.Context(), "kreact/test"); ExitCode(err, io.Discard) != ExitInvalid || !errors.As(err, &list) {
		t.Errorf("Load with a broken CRD file = %v, want invalid input, a diag.ErrorList", err)
	}
	r = InputFlags{Cluster: ClusterFlags{Kubeconfig: unreachableKubeconfig(t), QPS: DefaultQPS, Burst: DefaultBurst}}
	if _, _, _, err := r.Load(t.Context(), "kreact/test"); ExitCode(err, io.Discard) != ExitCluster {
		t.Errorf("Load from a cluster that cannot be reached = %v, want a ClusterError", err)
	}
}

// unreachableKubeconfig is a kubeconfig whose server is a loopback port
// that nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://`+addr+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
