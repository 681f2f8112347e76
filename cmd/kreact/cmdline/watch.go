package cmdline

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/cmd/kreact/tail"
)

// WatchOptions are kreact watch's flags and arguments.
type WatchOptions struct {
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	Output        string
	Cluster       ClusterFlags
	Log           LogFlags
	// Refs are the resources watched.
	Refs []string

	args []string
}

// AddFlags registers kreact watch's flags on fs.
func (o *WatchOptions) AddFlags(fs *FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "namespace to watch (default: the context's namespace)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "watch all namespaces")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVarP(&o.FieldSelector, "field-selector", "", "", "field selector, e.g. metadata.name=x")
	fs.StringVarP(&o.Output, "output", "o", "", "output format: (default) lines, wide, json or yaml")
	o.Cluster.Register(fs)
	o.Log.Register(fs)
}

// Complete takes the resources.
func (o *WatchOptions) Complete(args []string) { o.args, o.Refs = args, tail.Refs(args) }

// Validate checks the flags and that a resource is named; a selector
// that does not parse is an InvalidError.
func (o *WatchOptions) Validate() error {
	if len(o.args) == 0 {
		return &UsageError{Msg: "watch: name at least one resource, e.g. `kreact watch deploy,cm -A`"}
	}
	switch o.Output {
	case "", "wide", "json", "yaml":
	default:
		return &UsageError{Msg: fmt.Sprintf("watch: -o %q: want wide, json or yaml", o.Output)}
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return &InvalidError{fmt.Errorf("-l %q: %w", o.LabelSelector, err)}
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return &InvalidError{fmt.Errorf("--field-selector %q: %w", o.FieldSelector, err)}
	}
	return nil
}
