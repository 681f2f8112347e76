package cmdline

import "testing"

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
