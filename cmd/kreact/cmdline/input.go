package cmdline

// InputFlags are the rule files of kreact validate, rbac and webhooks
// (-f, and the arguments), and what their resource names resolve
// against: the built-in table of a standard API server plus --crd files,
// or with --kubeconfig or --context a cluster's discovery (plus --crd
// files).
type InputFlags struct {
	Files   []string
	CRDs    []string
	Cluster ClusterFlags
}

// Register adds -f, --crd and the cluster flags to fs.
func (r *InputFlags) Register(fs *FlagSet) {
	fs.ListVarP(&r.Files, "filename", "f", "rule file or directory (repeatable)")
	fs.ListVarP(&r.CRDs, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.Cluster.Register(fs)
}

// Complete takes the files named as arguments.
func (r *InputFlags) Complete(args []string) { r.Files = append(r.Files, args...) }

// Check checks that the command cmd is given files.
func (r *InputFlags) Check(cmd string) error {
	if len(r.Files) == 0 {
		return &UsageError{Msg: cmd + ": no rule files: use -f FILE|DIR"}
	}
	return nil
}

// Live reports whether names resolve against a cluster.
func (r *InputFlags) Live() bool { return r.Cluster.Named() }
