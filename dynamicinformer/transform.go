package dynamicinformer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/internal/resume"
	"github.com/kreact/kreact/projection"
)

// LastAppliedAnnotation is the annotation kubectl apply keeps a copy of
// the object in. stripForCache drops it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// stripForCache removes, in place, what rules never read and what costs
// the most memory in a cache: metadata.managedFields and the
// kubectl.kubernetes.io/last-applied-configuration annotation. An
// annotations map left empty is removed too. It is idempotent. It works
// on the maps directly: Unstructured's accessors copy the annotations and
// would allocate for every object.
func stripForCache(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	delete(md, "managedFields")
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		return
	}
	delete(ann, LastAppliedAnnotation)
	if len(ann) == 0 {
		delete(md, "annotations")
	}
}

// shape returns what an informer caching fields keeps of an object:
// stripForCache, then the projection, then the compact form. It is the
// informer's resume.Options.Shape: objects are shaped as they are
// decoded, page by page, so a list's decoded objects are never all held
// at once.
func shape(fields projection.Fields) func(*unstructured.Unstructured) resume.Object {
	return func(u *unstructured.Unstructured) resume.Object {
		stripForCache(u.Object)
		u.Object = fields.Apply(u.Object)
		return compact(u)
	}
}

// project returns the resume.Options.Shape of an informer that receives
// objects transcoded (stripped and compact): nil for whole objects, and
// for fields, the compact object cut down (see cut).
func project(fields projection.Fields) func(*compactObject) resume.Object {
	if fields.Whole() {
		return nil
	}
	keep := fields.Kept()
	return func(o *compactObject) resume.Object { return cut(o, keep) }
}

// bookmark is the bookmark a relist ends with (resume.Options.Bookmark):
// the object a watch bookmark is, with only its resourceVersion.
func bookmark(resourceVersion string) resume.Object {
	return compact(&unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion}}})
}

// fromMetadata returns the conversion of the metadata the server sends
// for an object of res (metadata-only lists and watches) to the object a
// handler expects: apiVersion and kind of res, and the metadata.
func fromMetadata(res apiresource.Resource) func(*metav1.PartialObjectMetadata) *unstructured.Unstructured {
	apiVersion := res.GVR.GroupVersion().String()
	return func(p *metav1.PartialObjectMetadata) *unstructured.Unstructured {
		md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.ObjectMeta)
		if err != nil {
			// ObjectMeta always converts; keep what names the object.
			md = map[string]any{"name": p.Name, "namespace": p.Namespace, "uid": string(p.UID), "resourceVersion": p.ResourceVersion}
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": res.Kind, "metadata": md}}
	}
}
