package cmdline

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/restmapper"
)

// RecordOptions are kreact record's flags and arguments.
type RecordOptions struct {
	Files, CRDs   []string
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	Output        string
	Duration      time.Duration
	Cluster       ClusterFlags
	Log           LogFlags
	// Refs and Names are the arguments, RESOURCE[,RESOURCE...] [NAME...]
	// as kubectl get takes them.
	Refs, Names []string

	args []string
}

// AddFlags registers kreact record's flags on fs.
func (o *RecordOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory (repeatable)")
	fs.ListVarP(&o.CRDs, "crd", "", "file of CustomResourceDefinitions for the case's spec.crds (repeatable)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "namespace to record (default: the context's namespace)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "record all namespaces")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVarP(&o.Output, "output", "o", "", "the case file to write (default: stdout)")
	fs.DurationVar(&o.Duration, "for", 0, "stop recording after this long (default: at Ctrl-C)")
	o.Cluster.Register(fs)
	o.Log.Register(fs)
}

// Complete takes the resources and the names.
func (o *RecordOptions) Complete(args []string) {
	if o.args = args; len(args) > 0 {
		o.Refs, o.Names = tail.Refs(args[:1]), args[1:]
	}
}

// Validate checks the flags and that a resource is named.
func (o *RecordOptions) Validate() error {
	if len(o.Files) == 0 {
		return &UsageError{Msg: "record: no rule files: use -f FILE|DIR"}
	}
	if len(o.args) == 0 {
		return &UsageError{Msg: "record: name a resource, e.g. `kreact record -f rules/ cm web -n shop`"}
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return &UsageError{Msg: fmt.Sprintf("record: -l %q: %v", o.LabelSelector, err)}
	}
	return nil
}

// Resources resolves the resources named (Refs) with resolve, the
// cluster's mapper: one the cluster does not serve is a UsageError, with
// the names that come close; any other failure an InvalidError.
func (o *RecordOptions) Resources(resolve func(string) (apiresource.Resource, error)) ([]apiresource.Resource, error) {
	var resources []apiresource.Resource
	for _, ref := range o.Refs {
		res, err := resolve(ref)
		var nf *restmapper.NotFoundError
		switch {
		case errors.As(err, &nf):
			return nil, &UsageError{Msg: "record: " + err.Error()}
		case err != nil:
			return nil, &InvalidError{Err: err}
		}
		resources = append(resources, res)
	}
	return resources, nil
}
