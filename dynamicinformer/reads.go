package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/projection"
)

// Watcher is what reads the caches: the Manager, for the engine and the
// admission server; fields is what the reader uses of the objects.
type Watcher interface {
	WatchFields(key Key, owner string, h cache.ResourceEventHandler, fields projection.Fields) (*Watch, error)
}

var _ Watcher = (*Manager)(nil)

// Reads answers a script's kreact.get and kreact.list (scripting.Host's
// Get and List) from the Watch it picks for a resource and namespace: the
// one way both kreact run's handlers and its admission handlers read the
// caches.
type Reads func(res apiresource.Resource, namespace string) (*Watch, error)

// Get returns the object, or nil when the cache does not hold it.
func (r Reads) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	w, err := r(res, namespace)
	if err != nil {
		return nil, err
	}
	obj, found, err := w.Get(namespace, name)
	if err != nil || !found {
		return nil, err
	}
	return obj, nil
}

// List returns the objects in namespace (all namespaces when empty) that
// selector matches.
func (r Reads) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	w, err := r(res, namespace)
	if err != nil {
		return nil, err
	}
	return w.List(namespace, selector)
}
