package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/shard"
)

// explainAddrEnv names the environment variable that gives kreact
// explain the address to ask when --address is not given.
const explainAddrEnv = "KREACT_EXPLAIN_ADDRESS"

// defaultExplainAddr is the address kreact explain asks by default; the
// manifests in deploy/ would pass the same to kreact run.
const defaultExplainAddr = "127.0.0.1:8083"

// explainCmd is `kreact explain RESOURCE NAME`: it asks a running kreact
// (kreact run --explain-address) what its rules know of an object.
func explainCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var namespace, output, addr, rule string
	fs := commandFlags("explain", stdout)
	fs.StringVarP(&namespace, "namespace", "n", "", "the object's namespace (default: default, for a namespaced resource)")
	fs.StringVarP(&output, "output", "o", "", "yaml or json (default: text)")
	fs.StringVarP(&addr, "address", "", "", "the --explain-address of the kreact run to ask (default: $"+explainAddrEnv+", else "+defaultExplainAddr+")")
	fs.StringVarP(&rule, "rule", "", "", "answer for this rule only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	args = fs.Args()
	// kubectl's TYPE/NAME form is accepted too.
	if len(args) == 1 {
		if r, n, ok := strings.Cut(args[0], "/"); ok {
			args = []string{r, n}
		}
	}
	switch {
	case len(args) < 2:
		return &usageError{Msg: "explain: name the resource and the object, e.g. `kreact explain deploy web -n shop`"}
	case len(args) > 2:
		return &usageError{Msg: fmt.Sprintf("explain: unexpected argument %q", args[2])}
	case output != "" && output != "yaml" && output != "json":
		return &usageError{Msg: fmt.Sprintf("explain: -o %s: want yaml or json", output)}
	}
	if addr == "" {
		addr = os.Getenv(explainAddrEnv)
	}
	if addr == "" {
		addr = defaultExplainAddr
	}
	resource, name := args[0], args[1]
	o, err := explain.Ask(ctx, addr, resource, namespace, name)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return &usageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return fmt.Errorf("explain: %w", err)
	}
	if rule != "" {
		var loaded []string
		i := slices.IndexFunc(o.Rules, func(r explain.Rule) bool { loaded = append(loaded, r.Name); return r.Name == rule })
		if i < 0 {
			return fmt.Errorf("explain: rule %q is not loaded in the kreact at %s (loaded: %s)", rule, addr, strings.Join(loaded, ", "))
		}
		o.Rules = o.Rules[i : i+1]
	}
	switch output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	case "yaml":
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		_, err = stdout.Write(data)
		return err
	}
	o.WriteText(stdout)
	return nil
}

// explainSource answers kreact explain for kreact run: it resolves the
// resource as rules do, reads the object from the API server, and asks
// the engine. With --shards, it says which replica the object belongs to.
func explainSource(stack *kube.Stack, eng *engine.Engine, m *shard.Membership, byNamespace bool) explain.Source {
	return func(ctx context.Context, ref, namespace, name string) (*explain.Object, error) {
		res, err := stack.Mapper.Resolve(ref)
		if err != nil {
			var nf *restmapper.NotFoundError
			if errors.As(err, &nf) {
				return nil, fmt.Errorf("%w: %w", explain.ErrUnknownResource, err)
			}
			return nil, err
		}
		if !res.Namespaced {
			namespace = ""
		} else if namespace == "" {
			namespace = metav1.NamespaceDefault
		}
		gr := res.GVR.GroupResource()
		out := &explain.Object{Resource: gr.String(), Namespace: namespace, Name: name}
		obj, err := stack.Client.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			obj = nil
		case err != nil:
			return nil, fmt.Errorf("get %s %s: %w", gr, name, err)
		default:
			out.Exists = true
		}
		out.Rules = eng.Explain(gr, namespace, name, obj)
		if m != nil {
			out.Process, out.Note = shardOwner(m, obj, res.Namespaced && byNamespace)
		}
		if obj == nil && !traced(out.Rules) {
			where := ""
			if namespace != "" {
				where = " in namespace " + namespace
			}
			return nil, fmt.Errorf("%w: %s %q%s, and no rule has a record of it", explain.ErrNotFound, gr, name, where)
		}
		return out, nil
	}
}

// traced reports whether a rule has records of the object, or work for it.
func traced(rs []explain.Rule) bool {
	for _, r := range rs {
		if len(r.Traces) > 0 {
			return true
		}
	}
	return false
}

// shardOwner names this replica and, when obj belongs to another
// replica's shard, which one to ask.
func shardOwner(m *shard.Membership, obj *unstructured.Unstructured, byNamespace bool) (process, note string) {
	process = "replica " + m.Identity()
	if obj == nil {
		return process, ""
	}
	members := m.Members()
	key := shard.KeyFor(byNamespace, byNamespace)
	for _, member := range members {
		if r, ok := shard.Assign(members, member); ok && shard.Matches(key, obj, r) {
			if member != m.Identity() {
				return process, fmt.Sprintf("the object is in the shard of replica %s, which handles its changes: ask that replica (its identity starts with its Pod's name)", member)
			}
			return process, ""
		}
	}
	return process, ""
}

// withIsolated adds to src's answers the rules that run in the other
// process of package isolation, which serves no explain endpoint.
func withIsolated(src explain.Source, elsewhere func() []string) explain.Source {
	return func(ctx context.Context, ref, namespace, name string) (*explain.Object, error) {
		o, err := src(ctx, ref, namespace, name)
		if err != nil {
			return nil, err
		}
		for _, r := range elsewhere() {
			o.Rules = append(o.Rules, explain.Rule{Name: r, Note: "runs in the isolated rules' process (spec.isolate, or moved there for misbehaving), which kreact explain cannot ask: its log lines carry isolated=true"})
		}
		return o, nil
	}
}
