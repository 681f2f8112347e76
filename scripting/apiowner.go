package scripting

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/types"
)

// The kreact API for owner references: kreact.owner(obj), and the owner
// option of create and apply (apiactions.go), which sets the child's
// controller reference.

// installOwners installs kreact.owner.
func (e *env) installOwners(kreact calls) {
	kreact.add("owner", e.ownerOf)
}

// ownerRef is the controller reference to an owner, as the owner option
// of create and apply sets it.
type ownerRef struct {
	t          target
	apiVersion string
}

// errOwnerUID refuses an owner without a uid: an owner reference names
// one object, not a name that a new object may take.
var errOwnerUID = errors.New("options.owner has no metadata.uid: pass the owner as the rule read it (the handler's object, kreact.get), not a reference")

// checkOwner returns an error when owner cannot own an object of child's
// resource in child's namespace. Both kreact run and kreact test check it
// in the script's call, where the author sees it at the call's position,
// rather than the API server or the garbage collector (which deletes a
// child whose owner it cannot find) acting on it later: Kubernetes' garbage collector takes a
// namespaced owner to be in its dependent's namespace, so it refuses a
// cluster-scoped child of a namespaced owner, and sees an owner in another
// namespace as absent (and deletes the child).
func checkOwner(owner, child target) error {
	switch {
	case owner.uid == "":
		return errOwnerUID
	case owner.res.Namespaced && !child.res.Namespaced:
		return fmt.Errorf("a cluster-scoped %s cannot be owned by %s, which is namespaced; use spec.finalizer and delete it in onDelete",
			child.res.GVR.GroupResource(), owner.String())
	case owner.res.Namespaced && owner.namespace != child.namespace:
		return fmt.Errorf("an object in namespace %s cannot be owned by %s in another namespace; use spec.finalizer and delete it in onDelete",
			child.namespace, owner.String())
	}
	return nil
}

// setOwner adds the controller reference to owner to the object m's
// metadata.ownerReferences (m is the script's object, converted, and may
// be changed), replacing a reference with the same uid. It refuses an
// object that names another controller: an object has at most one.
func setOwner(m map[string]any, owner ownerRef) error {
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		m["metadata"] = md
	}
	var refs []any
	switch x := md["ownerReferences"].(type) {
	case nil:
	case []any:
		refs = x
	default:
		return errors.New("metadata.ownerReferences must be a list")
	}
	uid := string(owner.t.uid)
	refs = slices.DeleteFunc(slices.Clone(refs), func(r any) bool {
		ref, _ := r.(map[string]any)
		return ref["uid"] == uid
	})
	for _, r := range refs {
		if ref, _ := r.(map[string]any); ref["controller"] == true {
			return fmt.Errorf("metadata.ownerReferences already names a controller, %v %v; an object has at most one", ref["kind"], ref["name"])
		}
	}
	md["ownerReferences"] = append(refs, map[string]any{
		"apiVersion":         owner.apiVersion,
		"kind":               owner.t.res.Kind,
		"name":               owner.t.name,
		"uid":                uid,
		"controller":         true,
		"blockOwnerDeletion": true,
	})
	return nil
}

// owner reads options.owner of create and apply, or returns nil when
// there is none.
func (e *env) owner(op string, o *goja.Object) *ownerRef {
	v := o.Get("owner")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	t := e.target(op+": options.owner", v)
	return &ownerRef{t: t, apiVersion: t.res.GVR.GroupVersion().String()}
}

// kreact.owner(obj): the object's controller owner, read-only, from the
// cache, or null when it has none or the cache does not hold it (gone, or
// replaced by another object of the same name).
func (e *env) ownerOf(call goja.FunctionCall) goja.Value {
	e.enter("owner")
	arg, ok := call.Argument(0).(*goja.Object)
	if !ok {
		e.throwType("owner: want owner(obj) with an object")
	}
	var m map[string]any
	if vm, ok := e.viewMap(arg); ok {
		m = vm
	} else if m, ok = e.json("owner", arg, "obj").(map[string]any); !ok {
		e.throwType("owner: want owner(obj) with an object")
	}
	md, _ := m["metadata"].(map[string]any)
	namespace, _ := md["namespace"].(string)
	var ref map[string]any
	switch refs := md["ownerReferences"].(type) {
	case []any:
		for _, r := range refs {
			if x, _ := r.(map[string]any); x["controller"] == true {
				ref = x
				break
			}
		}
	case nil:
	default:
		e.throwType("owner: metadata.ownerReferences must be a list")
	}
	if ref == nil {
		return goja.Null()
	}
	apiVersion, _ := ref["apiVersion"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	uid, _ := ref["uid"].(string)
	res, err := e.cfg.host.ResolveKind(apiVersion, kind)
	if err != nil {
		e.throw(fmt.Errorf("owner: resolve %s %s: %w", apiVersion, kind, err))
	}
	t := target{res: res, namespace: namespace, name: name, uid: types.UID(uid)}
	if !res.Namespaced {
		t.namespace = ""
	}
	obj, err := e.cfg.host.Get(res, t.namespace, t.name)
	if err != nil {
		e.throw(fmt.Errorf("owner: get %s: %w", t.String(), err))
	}
	if obj == nil || (uid != "" && obj.GetUID() != t.uid) {
		return goja.Null()
	}
	return e.object(obj)
}
