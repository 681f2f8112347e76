package dynamicinformer

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Key is what a Watch watches. Every Watch whose Key is equal but for the
// label selector (after normalisation, see Manager.Watch) shares the same
// informer and cache (see informerKey).
type Key struct {
	// GVR is the resource to watch. Version and Resource are required.
	GVR schema.GroupVersionResource
	// Namespace limits the watch to one namespace; "" watches all
	// namespaces (and is required for cluster-scoped resources).
	Namespace string
	// LabelSelector selects the objects by their labels, in kubectl
	// syntax ("app=web,tier!=db"); "" selects everything. It is sent to the
	// server when every Watch sharing the informer has the same one, and
	// applied by the informer otherwise, with the same meaning (see
	// Manager.WatchFields).
	LabelSelector string
	// FieldSelector is sent to the server ("metadata.name=x"). "" selects
	// everything. Which fields a resource supports is up to the server;
	// an unsupported one puts the watch in PhaseFailed.
	FieldSelector string
	// Sharded makes the informer hold only the objects of this replica's
	// shard (Options.Shards): the API server filters them when it supports
	// shard selectors, else the informer does. False holds every object,
	// as does a Manager without Options.Shards.
	Sharded bool
}

// normalize validates k and returns it in canonical form, so that
// selectors that mean the same thing share an informer.
func (k Key) normalize() (Key, error) {
	if k.GVR.Resource == "" || k.GVR.Version == "" {
		return k, fmt.Errorf("key %s: resource and version are required", k)
	}
	if strings.Contains(k.GVR.Resource, "/") {
		return k, fmt.Errorf("key %s: subresources cannot be watched", k)
	}
	sel, err := labels.Parse(k.LabelSelector)
	if err != nil {
		return k, fmt.Errorf("key %s: label selector: %w", k, err)
	}
	k.LabelSelector = sel.String()
	fs, err := fields.ParseSelector(k.FieldSelector)
	if err != nil {
		return k, fmt.Errorf("key %s: field selector: %w", k, err)
	}
	k.FieldSelector = fs.String()
	return k, nil
}

// informerKey returns the key of the informer serving k: k without its
// label selector, which the informer's Watches apply themselves when
// they differ (see entry.selectorLocked).
func (k Key) informerKey() Key {
	k.LabelSelector = ""
	return k
}

// resource formats the GVR like kubectl's resource.version.group, e.g.
// "configmaps.v1" or "widgets.v1.example.com".
func (k Key) resource() string {
	s := k.GVR.Resource + "." + k.GVR.Version
	if k.GVR.Group != "" {
		s += "." + k.GVR.Group
	}
	return s
}

// String returns a short human-readable form of the key, e.g.
// `configmaps.v1 in namespace "x" labels "app=web"`.
func (k Key) String() string {
	var b strings.Builder
	b.WriteString(k.resource())
	if k.Namespace != "" {
		fmt.Fprintf(&b, " in namespace %q", k.Namespace)
	}
	if k.LabelSelector != "" {
		fmt.Fprintf(&b, " labels %q", k.LabelSelector)
	}
	if k.FieldSelector != "" {
		fmt.Fprintf(&b, " fields %q", k.FieldSelector)
	}
	if k.Sharded {
		b.WriteString(" sharded")
	}
	return b.String()
}

// LogValue implements slog.LogValuer: the key is logged as a group with
// only its non-empty parts.
func (k Key) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("resource", k.resource())}
	if k.Namespace != "" {
		attrs = append(attrs, slog.String("namespace", k.Namespace))
	}
	if k.LabelSelector != "" {
		attrs = append(attrs, slog.String("labelSelector", k.LabelSelector))
	}
	if k.FieldSelector != "" {
		attrs = append(attrs, slog.String("fieldSelector", k.FieldSelector))
	}
	if k.Sharded {
		attrs = append(attrs, slog.Bool("sharded", true))
	}
	return slog.GroupValue(attrs...)
}

// where describes the scope of k for error messages.
func (k Key) where(namespaced bool) string {
	switch {
	case k.Namespace != "":
		return fmt.Sprintf(" in namespace %q", k.Namespace)
	case namespaced:
		return " in all namespaces"
	default:
		return ""
	}
}

// ErrStopped is returned by Manager.Watch once Manager.Run has returned.
var ErrStopped = errors.New("dynamicinformer: manager stopped")

// ErrNoCache is returned (wrapped) by Watch.Get and Watch.List while the
// watch has no running informer (pending, forbidden, failed or stopped).
var ErrNoCache = errors.New("no cache")
