package cmdline

// ResourceFlags choose what resource names resolve against, for kreact
// validate, rbac and webhooks: the built-in table of a standard API server
// plus --crd files, or with --kubeconfig or --context a cluster's
// discovery (plus --crd files).
type ResourceFlags struct {
	CRDs    []string
	Cluster ClusterFlags
}

// Register adds --crd and the cluster flags to fs.
func (r *ResourceFlags) Register(fs *FlagSet) {
	fs.ListVarP(&r.CRDs, "crd", "", "file of CustomResourceDefinitions whose resources rules may name (repeatable)")
	r.Cluster.Register(fs)
}

// Live reports whether names resolve against a cluster.
func (r *ResourceFlags) Live() bool { return r.Cluster.Named() }
