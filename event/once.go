package event

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/internal/qualified"
)

// The once marker: what kreact.once(obj) writes on the object it marks
// done for a rule (package scripting asks for it, package delivery sends
// it after the call's other actions), and how a caller tells it is there.

// OnceAnnotation is the annotation that marks an object done for rule's
// kreact.once: once.kreact.dev/RULE, whose value is when it was marked.
// RULE is cut to fit an annotation's name (qualified.Name: a team's Rule
// is NAMESPACE.NAME).
func OnceAnnotation(rule string) string { return "once.kreact.dev/" + qualified.Name(rule) }

// Marked reports whether obj carries rule's once marker.
func Marked(obj *unstructured.Unstructured, rule string) bool {
	if obj == nil {
		return false
	}
	md, _ := obj.Object["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	_, ok := annotations[OnceAnnotation(rule)]
	return ok
}

// OncePatch returns the merge patch that marks the object uid done for
// rule at t. The uid is a precondition: the API server refuses the patch
// (409) if the object was deleted and created again meanwhile, so that
// the new object is not marked for what was done to the old one.
func OncePatch(uid types.UID, rule string, t time.Time) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         uid,
		"annotations": map[string]any{OnceAnnotation(rule): t.UTC().Format(time.RFC3339)},
	}})
	return data
}
