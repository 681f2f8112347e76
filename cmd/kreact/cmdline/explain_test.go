package cmdline

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Without --kubeconfig or --context, a cluster that cannot be configured
// or reached leaves the resource's name as it is, to the kreact asked;
// named, it is a ClusterError; a bad client limit is a UsageError either
// way. (What a reachable cluster resolves: TestExplainResolvesTheResourceFirst
// in cmd/kreact, against a real API server.)
func TestExplainOptionsResolve(t *testing.T) {
	unreachable := unreachableKubeconfig(t)
	garbage := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(garbage, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		env       string // $KUBECONFIG
		cluster   ClusterFlags
		wantCode  int
		wantAsked string
	}{
		{name: "cannot be reached", env: unreachable, wantCode: ExitOK, wantAsked: "deploy"},
		{name: "cannot be configured", env: garbage, wantCode: ExitOK, wantAsked: "deploy"},
		{name: "named, cannot be reached", cluster: ClusterFlags{Kubeconfig: unreachable}, wantCode: ExitCluster},
		{name: "named, cannot be configured", cluster: ClusterFlags{Kubeconfig: garbage}, wantCode: ExitCluster},
		{name: "bad limit", env: unreachable, cluster: ClusterFlags{Burst: -1}, wantCode: ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			o := ExplainOptions{Resource: "deploy", Name: "web", Cluster: tc.cluster}
			if o.Cluster.QPS == 0 {
				o.Cluster.QPS = DefaultQPS
			}
			if o.Cluster.Burst == 0 {
				o.Cluster.Burst = DefaultBurst
			}
			asked, err := o.Resolve(t.Context(), "kreact/test")
			if code := ExitCode(err, io.Discard); code != tc.wantCode || asked != tc.wantAsked {
				t.Errorf("Resolve = %q, %v (exit %d); want %q, exit %d", asked, err, code, tc.wantAsked, tc.wantCode)
			}
		})
	}
}
