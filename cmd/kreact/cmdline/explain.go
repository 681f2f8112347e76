package cmdline

import (
	"fmt"
	"strings"

	"github.com/kreact/kreact/explain"
)

// ExplainOptions are kreact explain's flags and arguments.
type ExplainOptions struct {
	Namespace, Output, Address, Rule string
	// Resource and Name are the object asked about.
	Resource, Name string
	// Cluster is the API server that resolves Resource before kreact
	// is asked.
	Cluster ClusterFlags

	args []string
}

// AddFlags registers kreact explain's flags on fs.
func (o *ExplainOptions) AddFlags(fs *FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "the object's namespace (default: default, for a namespaced resource)")
	fs.StringVarP(&o.Output, "output", "o", "", "yaml or json (default: text)")
	fs.StringVarP(&o.Address, "address", "", "", "the --explain-address of the kreact run to ask (default: $"+explain.AddressEnv+", else "+explain.DefaultAddress+")")
	fs.StringVarP(&o.Rule, "rule", "", "", "answer for this rule only")
	o.Cluster.Register(fs)
}

// Complete takes the resource and the name, or kubectl's TYPE/NAME.
func (o *ExplainOptions) Complete(args []string) {
	if len(args) == 1 {
		if r, n, ok := strings.Cut(args[0], "/"); ok {
			args = []string{r, n}
		}
	}
	if o.args = args; len(args) >= 2 {
		o.Resource, o.Name = args[0], args[1]
	}
}

// Validate checks the output format and the arguments.
func (o *ExplainOptions) Validate() error {
	switch {
	case len(o.args) < 2:
		return &UsageError{Msg: "explain: name the resource and the object, e.g. `kreact explain deploy web -n shop`"}
	case len(o.args) > 2:
		return &UsageError{Msg: fmt.Sprintf("explain: unexpected argument %q", o.args[2])}
	case o.Output != "" && o.Output != "yaml" && o.Output != "json":
		return &UsageError{Msg: fmt.Sprintf("explain: -o %s: want yaml or json", o.Output)}
	}
	return nil
}
