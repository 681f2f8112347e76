package scripting

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var (
	deployments = apiresource.Resource{
		GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Kind:       "Deployment",
		Singular:   "deployment",
		Namespaced: true,
		ShortNames: []string{"deploy"},
		// Served by the API server: setCondition goes through status.
		Subresources: []string{"scale", "status"},
	}
	configMaps = apiresource.Resource{
		GVR:        schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:       "ConfigMap",
		Singular:   "configmap",
		Namespaced: true,
		ShortNames: []string{"cm"},
	}
	namespaces = apiresource.Resource{
		GVR:        schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		Kind:       "Namespace",
		Singular:   "namespace",
		ShortNames: []string{"ns"},
	}
)

type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// fakeHost records what a script asks for.
type fakeHost struct {
	mu         sync.Mutex
	resources  []apiresource.Resource
	objects    []*unstructured.Unstructured
	actions    []actions.Action
	logs       []logRecord
	enqueueErr error
	now        time.Time
	// getEntered and getRelease, when set, make Get block: it sends on
	// getEntered, then waits for getRelease to be closed.
	getEntered chan struct{}
	getRelease chan struct{}
}

var _ Host = (*fakeHost)(nil)

func newFakeHost(objs ...*unstructured.Unstructured) *fakeHost {
	return &fakeHost{
		resources: []apiresource.Resource{deployments, configMaps, namespaces},
		objects:   objs,
		now:       time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
	}
}

func (h *fakeHost) ResolveResource(ref string) (apiresource.Resource, error) {
	for _, r := range h.resources {
		if ref == r.GVR.Resource || ref == r.Singular || ref == r.GVR.GroupResource().String() || slices.Contains(r.ShortNames, ref) {
			return r, nil
		}
	}
	return apiresource.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", ref)
}

func (h *fakeHost) ResolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiresource.Resource{}, err
	}
	for _, r := range h.resources {
		if r.GVK() == gv.WithKind(kind) {
			return r, nil
		}
	}
	return apiresource.Resource{}, fmt.Errorf("no matches for kind %q in version %q", kind, apiVersion)
}

func (h *fakeHost) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	if h.getEntered != nil {
		h.getEntered <- struct{}{}
		<-h.getRelease
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.objects {
		if o.GroupVersionKind() == res.GVK() && o.GetNamespace() == namespace && o.GetName() == name {
			return o, nil
		}
	}
	return nil, nil
}

func (h *fakeHost) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*unstructured.Unstructured
	for _, o := range h.objects {
		if o.GroupVersionKind() == res.GVK() && (namespace == "" || o.GetNamespace() == namespace) &&
			selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Permit records every action it permits, in order, so that tests see what
// a call asked for even when the call then fails (Call returns nothing then).
func (h *fakeHost) Permit(a actions.Action) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.enqueueErr != nil {
		return h.enqueueErr
	}
	h.actions = append(h.actions, a)
	return nil
}

func (h *fakeHost) Log(level slog.Level, msg string, attrs ...slog.Attr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := map[string]any{}
	for _, a := range attrs {
		m[a.Key] = a.Value.Any()
	}
	h.logs = append(h.logs, logRecord{level, msg, m})
}

func (h *fakeHost) Now() time.Time { return h.now }

func (h *fakeHost) recorded() []actions.Action {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.actions)
}

func (h *fakeHost) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, l := range h.logs {
		out = append(out, l.Msg)
	}
	return out
}

// deployment returns a Deployment as an informer would hold it.
func deployment(ns, name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       ns,
			"uid":             "uid-" + name,
			"resourceVersion": "42",
			"generation":      int64(7),
			"labels":          map[string]any{"app": name, "tier": "web"},
			"annotations":     map[string]any{"example.com/replicas": "3", "a.b/c": "dotted"},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"paused":   false,
			"ratio":    0.5,
			"template": map[string]any{
				"spec": map[string]any{
					"containers": []any{
						map[string]any{"name": "app", "image": "nginx:1.27", "args": []any{"-v", nil}},
						map[string]any{"name": "sidecar", "image": "envoy:1.30"},
					},
				},
			},
		},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}

// mustRuntime compiles src as file name and builds a runtime on host.
func mustRuntime(t testing.TB, name, src string, host Host, opts RuntimeOptions) *Runtime {
	t.Helper()
	p, err := Compile(name, src, CompileOptions{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if opts.Rule == "" {
		opts.Rule = "test-rule"
	}
	r, err := NewRuntime(p, host, opts)
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// position returns "name:line:col" of the first occurrence of needle in src.
func position(name, src, needle string) string {
	i := strings.Index(src, needle)
	if i < 0 {
		panic("needle not found: " + needle)
	}
	line := strings.Count(src[:i], "\n") + 1
	col := i - strings.LastIndex(src[:i], "\n")
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// positionOf is position as a diag.Position of rule.
func positionOf(rule, name, src, needle string) diag.Position {
	i := strings.Index(src, needle)
	if i < 0 {
		panic("needle not found: " + needle)
	}
	line := strings.Count(src[:i], "\n") + 1
	col := i - strings.LastIndex(src[:i], "\n")
	return diag.Position{Rule: rule, File: name, Line: line, Col: col}
}
