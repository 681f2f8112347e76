package cmdline

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/rules"
)

// ReleaseOptions are kreact finalizers release's flags and arguments.
type ReleaseOptions struct {
	Files         []string
	Namespace     string
	AllNamespaces bool
	Wait          time.Duration
	Cluster       ClusterFlags
	Log           LogFlags
	// Rule is the rule whose finalizer is released, Refs the resources
	// named after it.
	Rule string
	Refs []string

	args []string
}

// AddFlags registers kreact finalizers release's flags on fs.
func (o *ReleaseOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory holding RULE, to release on the resources it watches (repeatable)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "only this namespace (default: every namespace)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every namespace (the default; accepted as with kubectl)")
	fs.DurationVar(&o.Wait, "wait", 5*time.Second, "then watch the released objects this long for a kreact still running the rule, which puts the finalizer back (0: do not watch)")
	o.Cluster.Register(fs)
	o.Log.Register(fs)
}

// Complete takes the rule and the resources.
func (o *ReleaseOptions) Complete(args []string) {
	if o.args = args; len(args) > 0 {
		o.Rule, o.Refs = args[0], tail.Refs(args[1:])
	}
}

// Validate checks the flags and the arguments; a rule name that cannot
// be one is an InvalidError.
func (o *ReleaseOptions) Validate() error {
	if len(o.args) == 0 {
		return &UsageError{Msg: "finalizers release: name the rule, e.g. `kreact finalizers release secret-sync secrets`"}
	}
	switch {
	case len(o.Refs) == 0 && len(o.Files) == 0:
		return &UsageError{Msg: fmt.Sprintf("finalizers release: name the resources rule %s watches (e.g. secrets), or its rule files with -f", o.Rule)}
	case len(o.Refs) > 0 && len(o.Files) > 0:
		return &UsageError{Msg: "finalizers release: name resources or give -f, not both"}
	case o.Namespace != "" && o.AllNamespaces:
		return &UsageError{Msg: "finalizers release: -n and -A together: choose one"}
	case o.Wait < 0:
		return &UsageError{Msg: fmt.Sprintf("finalizers release: --wait %s: want a duration of 0 or more", o.Wait)}
	}
	if errs := validation.IsDNS1123Label(o.Rule); len(errs) > 0 {
		return &InvalidError{fmt.Errorf("rule name %q: %s", o.Rule, strings.Join(errs, "; "))}
	}
	return nil
}

// Where says which namespaces are scanned, as the output says it.
func (o *ReleaseOptions) Where() string {
	if o.Namespace != "" {
		return "in namespace " + o.Namespace
	}
	return "in every namespace"
}

// Resources returns the resources to scan: those named (Refs), or with
// -f those the rule watches, from its rule files (rules.Find); a rule
// that is not in them, or files that do not load, an InvalidError.
func (o *ReleaseOptions) Resources() ([]string, error) {
	if len(o.Files) == 0 {
		return o.Refs, nil
	}
	r, err := rules.Find(o.Rule, o.Files...)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	var refs []string
	for _, w := range r.Watch {
		refs = append(refs, w.Resource)
	}
	return refs, nil
}
