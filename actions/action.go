package actions

import (
	"github.com/kreact/kreact/diag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Verb is what an action does.
type Verb string

// The action verbs a rule can ask for. They are also the verbs a rule
// declares in its permissions.
const (
	// Create creates Object.
	Create Verb = "create"
	// Apply server-side applies Object with field manager "kreact".
	Apply Verb = "apply"
	// Patch sends Patch with PatchType (merge or JSON patch).
	Patch Verb = "patch"
	// Delete deletes the named object.
	Delete Verb = "delete"
	// Event records a Kubernetes Event about the named object.
	Event Verb = "event"
	// HTTP sends an HTTP request to a URL the rule allows.
	HTTP Verb = "http"
	// SetCondition sets Condition in the named object's status.conditions
	// (MergeCondition), through Subresource (ConditionSubresource:
	// "status", or "" for a resource without one, whose conditions are
	// written with the object, MergeConditionInObject): it reads the
	// object when it executes and writes only when the condition changes.
	SetCondition Verb = "condition"
)

// apiVerbs is the one table of what each action verb asks of the API
// server on its action's own resource: the request's verb (what the
// resource must support, from discovery), and the verbs RBAC must grant.
// Server-side apply is a PATCH request, but when it creates the object the
// API server also authorizes create, so apply needs both granted. Verbs
// not listed need nothing there (an event creates an Event, an http
// request is not an API call).
var apiVerbs = map[Verb]struct {
	request string
	granted []string
}{
	Create: {"create", []string{"create"}},
	Apply:  {"patch", []string{"create", "patch"}},
	Patch:  {"patch", []string{"patch"}},
	Delete: {"delete", []string{"delete"}},
	// A condition reads and patches the object's status subresource
	// (RESOURCE/status), or the object itself where the resource has
	// none (ConditionSubresource).
	SetCondition: {"", []string{"get", "patch"}},
}

// APIVerbs returns the Kubernetes API verbs that RBAC must grant for an
// action of verb v on its own resource, or nil when it needs none there.
func (v Verb) APIVerbs() []string { return apiVerbs[v].granted }

// RequestVerb returns the API verb of the request an action of verb v
// sends to its own resource, which the resource must support, or "" when
// it sends none there.
func (v Verb) RequestVerb() string { return apiVerbs[v].request }

// Action is one request a rule made. It is plain data: scripts build it, the
// queue carries it and a worker executes it.
type Action struct {
	// Rule is the name of the rule that asked for the action.
	Rule string
	// Verb is what to do.
	Verb Verb
	// Resource is the target's resolved resource; zero for HTTP.
	Resource schema.GroupVersionResource
	// Kind and APIVersion of the target, for events and logs.
	Kind, APIVersion string
	// Namespaced is true when Resource is namespace-scoped.
	Namespaced bool
	// Namespace and Name of the target object. Name may be empty for a
	// create that uses metadata.generateName.
	Namespace, Name string
	// Subresource, if set, targets a subresource of the object, such as
	// "status", for Apply, Patch and SetCondition.
	Subresource string
	// UID of the target object, when known (events).
	UID types.UID
	// Object is the body of a create or apply.
	Object map[string]any
	// PatchType is types.MergePatchType or types.JSONPatchType for Patch.
	PatchType types.PatchType
	// PatchData is the JSON patch body for Patch.
	PatchData []byte
	// EventType ("Normal" or "Warning"), Reason and Message describe an Event.
	EventType, Reason, Message string
	// Request describes an HTTP action.
	Request *HTTPRequest
	// Condition is what a SetCondition action sets.
	Condition *Condition
	// DryRun sends the request with dryRun=All (HTTP: not sent, only logged).
	DryRun bool
	// Origin is where the script asked for it, for logs. For an action
	// kreact asks for itself (removing its finalizer), File says so
	// ("finalizer NAME") and Line is 0.
	Origin diag.Position
	// Guarded marks kreact's own patch that tests the object's state
	// first (its finalizer's place in the list, a resourceVersion): the
	// API server refuses it when another client changed the object
	// meanwhile, and whoever asked for it makes it again from the newer
	// state. Such a refusal is logged at Info, not as an error.
	Guarded bool
}

// HTTPRequest is the request of an HTTP action.
type HTTPRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
}
