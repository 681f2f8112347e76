package explain

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/shard"
)

// Live is what a running kreact answers with (the Source of its Handler).
type Live struct {
	// Resolve resolves a resource as rules do (restmapper.Mapper.Resolve).
	Resolve func(ref string) (apiresource.Resource, error)
	// Client reads the object from the API server.
	Client dynamic.Interface
	// Rules answers for every loaded rule (engine.Engine.Explain).
	Rules func(gr schema.GroupResource, namespace, name string, obj *unstructured.Unstructured) []Rule
	// Shard, with --shards, is this replica's membership; ShardByNamespace
	// is set when the shards split objects by namespace.
	Shard            *shard.Membership
	ShardByNamespace bool
	// Elsewhere, if set, names the rules of the isolated rules' process,
	// which serves no explain endpoint (isolation.Isolation.RulesElsewhere).
	Elsewhere func() []string
}

// Source answers kreact explain for kreact run: it resolves the resource
// as rules do, reads the object from the API server, and asks the engine.
// With --shards, it says which replica the object belongs to.
func (l Live) Source() Source {
	return func(ctx context.Context, ref, namespace, name string) (*Object, error) {
		res, err := Resolve(l.Resolve, ref)
		if err != nil {
			return nil, err
		}
		if !res.Namespaced {
			namespace = ""
		} else if namespace == "" {
			namespace = metav1.NamespaceDefault
		}
		gr := res.GVR.GroupResource()
		out := &Object{Resource: gr.String(), Namespace: namespace, Name: name}
		obj, err := l.Client.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			obj = nil
		case err != nil:
			return nil, fmt.Errorf("get %s %s: %w", gr, name, err)
		default:
			out.Exists = true
		}
		out.Rules = l.Rules(gr, namespace, name, obj)
		if l.Shard != nil {
			out.Process, out.Note = shardOwner(l.Shard, obj, res.Namespaced && l.ShardByNamespace)
		}
		if obj == nil && !traced(out.Rules) {
			where := ""
			if namespace != "" {
				where = " in namespace " + namespace
			}
			return nil, fmt.Errorf("%w: %s %q%s, and no rule has a record of it", ErrNotFound, gr, name, where)
		}
		if l.Elsewhere != nil {
			for _, r := range l.Elsewhere() {
				out.Rules = append(out.Rules, Rule{Name: r, Note: "runs in the isolated rules' process (spec.isolate, or moved there for misbehaving), which kreact explain cannot ask: its log lines carry isolated=true"})
			}
		}
		return out, nil
	}
}

// Resolve resolves the resource ref with resolve (restmapper.Mapper.Resolve)
// for kreact explain, the command and the running kreact alike: a name
// that names no resource the cluster serves is ErrUnknownResource, whose
// message has the names that come close.
func Resolve(resolve func(ref string) (apiresource.Resource, error), ref string) (apiresource.Resource, error) {
	res, err := resolve(ref)
	var nf *restmapper.NotFoundError
	if errors.As(err, &nf) {
		return res, fmt.Errorf("%w: %w", ErrUnknownResource, err)
	}
	return res, err
}

// traced reports whether a rule has records of the object, or work for it.
func traced(rs []Rule) bool {
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
