package dynamicinformer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The methods below make a compactObject an API object for client-go:
// the reflector reads its resourceVersion, the cache its namespace and
// name. The four identity getters read fields; the others decode the
// object, which only diagnostics do. A compactObject is immutable: its
// setters panic, as a write to a cached object is a bug.

func (o *compactObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject returns o: it cannot change.
func (o *compactObject) DeepCopyObject() runtime.Object { return o }

func (o *compactObject) GetNamespace() string         { return o.metaString(metaNamespace) }
func (o *compactObject) GetName() string              { return o.metaString(metaName) }
func (o *compactObject) GetUID() types.UID            { return types.UID(o.metaString(metaUID)) }
func (o *compactObject) GetResourceVersion() string   { return o.metaString(metaResourceVersion) }
func (o *compactObject) GetGenerateName() string      { return o.decode().GetGenerateName() }
func (o *compactObject) GetGeneration() int64         { return o.decode().GetGeneration() }
func (o *compactObject) GetSelfLink() string          { return o.decode().GetSelfLink() }
func (o *compactObject) GetLabels() map[string]string { return o.decode().GetLabels() }
func (o *compactObject) GetAnnotations() map[string]string {
	return o.decode().GetAnnotations()
}
func (o *compactObject) GetFinalizers() []string { return o.decode().GetFinalizers() }
func (o *compactObject) GetOwnerReferences() []metav1.OwnerReference {
	return o.decode().GetOwnerReferences()
}
func (o *compactObject) GetCreationTimestamp() metav1.Time { return o.decode().GetCreationTimestamp() }
func (o *compactObject) GetDeletionTimestamp() *metav1.Time {
	return o.decode().GetDeletionTimestamp()
}
func (o *compactObject) GetDeletionGracePeriodSeconds() *int64 {
	return o.decode().GetDeletionGracePeriodSeconds()
}
func (o *compactObject) GetManagedFields() []metav1.ManagedFieldsEntry {
	return o.decode().GetManagedFields()
}

func readOnly() { panic("dynamicinformer: a cached object is read-only") }

func (o *compactObject) SetNamespace(string)                          { readOnly() }
func (o *compactObject) SetName(string)                               { readOnly() }
func (o *compactObject) SetGenerateName(string)                       { readOnly() }
func (o *compactObject) SetUID(types.UID)                             { readOnly() }
func (o *compactObject) SetResourceVersion(string)                    { readOnly() }
func (o *compactObject) SetGeneration(int64)                          { readOnly() }
func (o *compactObject) SetSelfLink(string)                           { readOnly() }
func (o *compactObject) SetCreationTimestamp(metav1.Time)             { readOnly() }
func (o *compactObject) SetDeletionTimestamp(*metav1.Time)            { readOnly() }
func (o *compactObject) SetDeletionGracePeriodSeconds(*int64)         { readOnly() }
func (o *compactObject) SetLabels(map[string]string)                  { readOnly() }
func (o *compactObject) SetAnnotations(map[string]string)             { readOnly() }
func (o *compactObject) SetFinalizers([]string)                       { readOnly() }
func (o *compactObject) SetOwnerReferences([]metav1.OwnerReference)   { readOnly() }
func (o *compactObject) SetManagedFields([]metav1.ManagedFieldsEntry) { readOnly() }
