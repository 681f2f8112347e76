package cmdline

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// RBACOptions are kreact rbac's flags and arguments.
type RBACOptions struct {
	InputFlags
	Name            string
	Namespace       string
	LeaderElect     bool
	Shards          bool
	CreateNamespace bool
	CASecret        string
	RuleObjects     bool
}

// AddFlags registers kreact rbac's flags on fs.
func (o *RBACOptions) AddFlags(fs *FlagSet) {
	fs.StringVarP(&o.Name, "name", "", "kreact", "name of the ServiceAccount, roles and bindings")
	fs.StringVarP(&o.Namespace, "namespace", "n", "kreact-system", "namespace of the ServiceAccount (and of the Lease with --leader-elect)")
	fs.BoolVarP(&o.LeaderElect, "leader-elect", "", false, "also grant what leader election needs on its Lease in --namespace")
	fs.BoolVarP(&o.CreateNamespace, "create-namespace", "", true, "print the Namespace --namespace first, so that kubectl apply creates it; false when something else creates it")
	fs.BoolVarP(&o.Shards, "shards", "", false, "also grant what sharding (kreact run --shards) needs on the replicas' Leases in --namespace")
	fs.StringVarP(&o.CASecret, "admission-ca-secret", "", "",
		"with rules that have admission handlers: also grant get and create on this Secret's resource in --namespace, for kreact run --admission-ca-secret")
	fs.BoolVarP(&o.RuleObjects, "rule-objects", "", false, "also grant what kreact run --rule-objects needs: watch Rule and ClusterRule objects and write their status (rule files are then optional)")
	o.Register(fs)
}

// Validate checks the flags and that files are named.
func (o *RBACOptions) Validate() error {
	if o.LeaderElect && o.Shards {
		return &UsageError{Msg: "rbac: --shards and --leader-elect exclude each other, as they do for kreact run"}
	}
	if len(o.Files) > 0 || !o.RuleObjects {
		if err := o.Check("rbac"); err != nil {
			return err
		}
	}
	for flag, v := range map[string]string{"--name": o.Name, "--namespace": o.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return &UsageError{Msg: fmt.Sprintf("rbac: %s %q: %s", flag, v, strings.Join(errs, "; "))}
		}
	}
	return nil
}
