package scripting

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
)

// Host is what a script can reach outside its runtime. The engine implements
// it; tests use a fake. A Runtime calls it from the goroutine that runs the
// script (not the caller of Runtime.Call), one call at a time per Runtime;
// several Runtimes may share one Host. A method that blocks delays only the
// script: Call gives up on it after the timeout.
type Host interface {
	// ResolveResource maps a reference as kubectl takes it ("deploy",
	// "deployments.apps", "deployments.v1.apps") to a resource.
	ResolveResource(ref string) (apiresource.Resource, error)
	// ResolveKind maps an apiVersion and a kind to a resource.
	ResolveKind(apiVersion, kind string) (apiresource.Resource, error)
	// Get returns the named object, or nil and no error when it does not
	// exist. The returned object is not modified.
	Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of res in namespace ("" for all namespaces)
	// that match selector. The returned objects are not modified.
	List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error)
	// Permit checks that the rule may ask for a (its declared permissions,
	// its allowed URLs). An error is thrown into the script as an
	// exception. Permit only checks: the actions a call asks for are
	// returned by Runtime.Call when the call succeeds, and are the
	// caller's to queue.
	Permit(a actions.Action) error
	// Log writes a log record on behalf of the script.
	Log(level slog.Level, msg string, attrs ...slog.Attr)
	// Now is the script's clock: kreact.now(), Date.now() and new Date().
	Now() time.Time
}
