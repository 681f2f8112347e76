package cmdline

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// PreviewOptions are kreact preview's flags and arguments.
type PreviewOptions struct {
	// Files are the rules to preview, Against the running version's.
	Files, Against []string
	Namespace      string
	AllNamespaces  bool
	LabelSelector  string
	Output         string
	// ExitCode makes a preview that shows actions (or, with Against, a
	// difference) exit with ExitChanges.
	ExitCode bool
	Cluster  ClusterFlags
	Log      LogFlags
}

// AddFlags registers kreact preview's flags on fs.
func (o *PreviewOptions) AddFlags(fs *FlagSet) {
	fs.ListVarP(&o.Files, "filename", "f", "rule file or directory to preview (repeatable)")
	fs.ListVarP(&o.Against, "against", "", "rule file or directory of the running version: show how the actions differ from its (repeatable)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "hand the rules only this namespace's objects (default: every object they watch, as kreact run)")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "hand the rules the objects of every namespace they watch (the default)")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "hand the rules only the objects this label selector matches, e.g. app=web")
	fs.StringVarP(&o.Output, "output", "o", "", "yaml or json (default: text, with a diff per action)")
	fs.BoolVarP(&o.ExitCode, "exit-code", "", false, fmt.Sprintf("exit %d when the rules would act (with --against: when the actions differ), 0 when not", ExitChanges))
	o.Cluster.Register(fs)
	o.Log.Register(fs)
}

// Complete takes the files named as arguments.
func (o *PreviewOptions) Complete(args []string) { o.Files = append(o.Files, args...) }

// Validate checks the flags.
func (o *PreviewOptions) Validate() error {
	switch {
	case len(o.Files) == 0:
		return &UsageError{Msg: "preview: no rule files: use -f FILE|DIR"}
	case o.AllNamespaces && o.Namespace != "":
		return &UsageError{Msg: "preview: -n and -A do not go together"}
	case o.Output != "" && o.Output != "yaml" && o.Output != "json":
		return &UsageError{Msg: fmt.Sprintf("preview: -o %s: want yaml or json", o.Output)}
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return &UsageError{Msg: fmt.Sprintf("preview: -l %q: %v", o.LabelSelector, err)}
	}
	return nil
}
