package restmapper_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/restmapper"
)

// crdYAML are the custom resources the tests add to the built-in ones.
var crdYAML = []string{
	// Short names, several served versions, v1 preferred.
	`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec:
  group: cert-manager.io
  scope: Namespaced
  names: {plural: certificates, singular: certificate, kind: Certificate, shortNames: [cert, certs], categories: [cert-manager]}
  versions:
  - {name: v1alpha2, served: true, storage: false}
  - {name: v1, served: true, storage: true}
  - {name: v1alpha1, served: false, storage: false}`,
	// Storage is v1beta1, but the API server prefers the highest served
	// version, v1.
	`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.kreact.io}
spec:
  group: example.kreact.io
  scope: Cluster
  names: {plural: gizmos, kind: Gizmo, shortNames: [gz]}
  versions:
  - {name: v1beta1, served: true, storage: true}
  - {name: v1, served: true, storage: false}`,
	// Names that collide with built-in ones, which must win.
	`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: events.example.kreact.io}
spec:
  group: example.kreact.io
  scope: Namespaced
  names: {plural: events, singular: event, kind: Event, shortNames: [deploy, ev]}
  versions: [{name: v1, served: true, storage: true}]`,
	// The same plural in two groups: the first listed wins.
	`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.a.example.com}
spec:
  group: a.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions: [{name: v1, served: true, storage: true}]`,
	`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.b.example.com}
spec:
  group: b.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions: [{name: v1, served: true, storage: true}]`,
}

// testResources returns the built-in resources and the test CRDs'.
func testResources(t testing.TB) []apiresource.Resource {
	t.Helper()
	rs := restmapper.Builtin()
	for _, y := range crdYAML {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
			t.Fatal(err)
		}
		crd, err := restmapper.ResourcesFromCRD(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, crd...)
	}
	return rs
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func TestResolve(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	deployments := gvr("apps", "v1", "deployments")
	certificates := gvr("cert-manager.io", "v1", "certificates")
	tests := []struct {
		name string
		ref  string
		want schema.GroupVersionResource
	}{
		{"plural", "deployments", deployments},
		{"singular", "deployment", deployments},
		{"short name", "deploy", deployments},
		{"kind", "Deployment", deployments},
		{"kind in capitals", "DEPLOYMENT", deployments},
		{"plural in capitals", "Deployments", deployments},
		{"plural.group", "deployments.apps", deployments},
		{"plural.version.group", "deployments.v1.apps", deployments},
		{"Kind.group", "Deployment.apps", deployments},
		{"Kind.version.group", "Deployment.v1.apps", deployments},
		{"short.group", "deploy.apps", deployments},
		{"apiVersion Kind", "apps/v1 Deployment", deployments},
		{"apiVersion kind in lower case", "apps/v1 deployment", deployments},
		{"surrounding space", "  deployments  ", deployments},
		{"core plural", "configmaps", gvr("", "v1", "configmaps")},
		{"core short name", "cm", gvr("", "v1", "configmaps")},
		{"core apiVersion Kind", "v1 ConfigMap", gvr("", "v1", "configmaps")},
		{"core plural.version.", "pods.v1.", gvr("", "v1", "pods")},
		{"core wins over events.k8s.io", "events", gvr("", "v1", "events")},
		{"core wins by short name", "ev", gvr("", "v1", "events")},
		{"core wins by kind", "Event", gvr("", "v1", "events")},
		{"other events by group", "events.events.k8s.io", gvr("events.k8s.io", "v1", "events")},
		{"other events by Kind.group", "Event.events.k8s.io", gvr("events.k8s.io", "v1", "events")},
		{"CRD events by group", "events.example.kreact.io", gvr("example.kreact.io", "v1", "events")},
		{"built-in short name wins over CRD's", "deploy", deployments},
		{"preferred version", "hpa", gvr("autoscaling", "v2", "horizontalpodautoscalers")},
		{"other version", "horizontalpodautoscalers.v1.autoscaling", gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{"short name with version", "hpa.v1.autoscaling", gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{"group prefix", "storageclasses.storage", gvr("storage.k8s.io", "v1", "storageclasses")},
		{"short name with group prefix", "sc.storage", gvr("storage.k8s.io", "v1", "storageclasses")},
		{"CRD of the API server", "crd", gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions")},
		{"CRD plural", "certificates", certificates},
		{"CRD singular", "certificate", certificates},
		{"CRD short name", "cert", certificates},
		{"CRD second short name", "certs", certificates},
		{"CRD kind", "Certificate", certificates},
		{"CRD plural.group", "certificates.cert-manager.io", certificates},
		{"CRD other served version", "certificates.v1alpha2.cert-manager.io", gvr("cert-manager.io", "v1alpha2", "certificates")},
		{"CRD apiVersion Kind", "cert-manager.io/v1 Certificate", certificates},
		{"CRD preferred is highest served, not storage", "gizmos", gvr("example.kreact.io", "v1", "gizmos")},
		{"CRD storage version by name", "gz.v1beta1.example.kreact.io", gvr("example.kreact.io", "v1beta1", "gizmos")},
		{"same plural: first group wins", "widgets", gvr("a.example.com", "v1", "widgets")},
		{"same plural: by group", "widgets.b.example.com", gvr("b.example.com", "v1", "widgets")},
		{"same plural: by group prefix", "widgets.b", gvr("b.example.com", "v1", "widgets")},
		{"same short name: first group wins", "wd", gvr("a.example.com", "v1", "widgets")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Resolve(tt.ref)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.ref, err)
			}
			if got.GVR != tt.want {
				t.Errorf("Resolve(%q) = %s, want %s", tt.ref, got.GVR, tt.want)
			}
		})
	}
}

func TestResolveKind(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	tests := []struct {
		apiVersion, kind string
		want             schema.GroupVersionResource
	}{
		{"apps/v1", "Deployment", gvr("apps", "v1", "deployments")},
		{"apps/v1", "deployment", gvr("apps", "v1", "deployments")},
		{"v1", "ConfigMap", gvr("", "v1", "configmaps")},
		{"v1", "Event", gvr("", "v1", "events")},
		{"events.k8s.io/v1", "Event", gvr("events.k8s.io", "v1", "events")},
		{"autoscaling/v1", "HorizontalPodAutoscaler", gvr("autoscaling", "v1", "horizontalpodautoscalers")},
		{"cert-manager.io/v1alpha2", "Certificate", gvr("cert-manager.io", "v1alpha2", "certificates")},
		{"", "Deployment", gvr("apps", "v1", "deployments")},
		{"", "Event", gvr("", "v1", "events")},
	}
	for _, tt := range tests {
		t.Run(tt.apiVersion+" "+tt.kind, func(t *testing.T) {
			got, err := m.ResolveKind(tt.apiVersion, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got.GVR != tt.want {
				t.Errorf("ResolveKind(%q, %q) = %s, want %s", tt.apiVersion, tt.kind, got.GVR, tt.want)
			}
		})
	}
}

func TestResolveReturnsTheWholeResource(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	r, err := m.Resolve("cert")
	if err != nil {
		t.Fatal(err)
	}
	want := apiresource.Resource{
		GVR: gvr("cert-manager.io", "v1", "certificates"), Kind: "Certificate", Singular: "certificate",
		Namespaced: true, ShortNames: []string{"cert", "certs"}, Categories: []string{"cert-manager"},
		Verbs:     []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		Preferred: true,
	}
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Errorf("Resolve(cert) = %+v\nwant %+v", r, want)
	}
	if r.GVK() != (schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}) {
		t.Errorf("GVK = %s", r.GVK())
	}
	ns, err := m.Resolve("namespaces")
	if err != nil || ns.Namespaced {
		t.Errorf("namespaces: %+v, %v; want cluster-scoped", ns, err)
	}
}

func TestResolveNotFound(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	tests := []struct {
		ref         string
		suggestions []string
		message     string
		// misspelt: a close name resolves in a served group (or no
		// group is named); otherwise the name may be a CRD to come.
		misspelt bool
	}{
		{"deploymnets", []string{"deployments"}, `"deploymnets": no such resource; did you mean "deployments"?`, true},
		{"Deploymnet", []string{"Deployment"}, "", true},
		{"deploymnets.apps", []string{"deployments.apps"}, "", true},
		{"deployments.extensions", []string{"deployments.apps"}, "", false},
		{"deployments.v1beta1.apps", []string{"deployments.apps"}, "", true},
		{"certificat", []string{"certificate"}, "", true},
		{"gizmoz", []string{"gizmos"}, "", true},
		{"gizmos.example.org", []string{"gizmos.example.kreact.io"}, "", false},
		{"apps/v1 Deploymnet", []string{"apps/v1 Deployment"}, "", true},
		{"apps/v1beta1 Deployment", []string{"apps/v1 Deployment"}, "", true},
		{"example.org/v1 Gizmo", []string{"example.kreact.io/v1 Gizmo", "example.kreact.io/v1beta1 Gizmo"}, "", false},
		{"zzzzzzzz", nil, `"zzzzzzzz": no such resource`, false},
		{"qq", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			_, err := m.Resolve(tt.ref)
			var nf *restmapper.NotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("Resolve(%q) error = %v, want *NotFoundError", tt.ref, err)
			}
			if nf.Ref != tt.ref {
				t.Errorf("Ref = %q, want %q", nf.Ref, tt.ref)
			}
			if fmt.Sprint(nf.Suggestions) != fmt.Sprint(tt.suggestions) {
				t.Errorf("Suggestions = %q, want %q", nf.Suggestions, tt.suggestions)
			}
			if tt.message != "" && err.Error() != tt.message {
				t.Errorf("message = %q, want %q", err.Error(), tt.message)
			}
			if nf.Misspelt() != tt.misspelt {
				t.Errorf("Misspelt() = %v, want %v (UnknownGroup %v)", nf.Misspelt(), tt.misspelt, nf.UnknownGroup)
			}
		})
	}
}

func TestSuggestionsAreCappedAndResolve(t *testing.T) {
	src := restmapper.NewStatic(testResources(t))
	m := restmapper.New(src, restmapper.Options{})
	for _, ref := range []string{"sv", "pox", "nodez", "secret.apps", "Confgmap"} {
		_, err := m.Resolve(ref)
		var nf *restmapper.NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("Resolve(%q) = %v, want *NotFoundError", ref, err)
		}
		if len(nf.Suggestions) == 0 || len(nf.Suggestions) > 3 {
			t.Errorf("Resolve(%q): %d suggestions %q, want 1 to 3", ref, len(nf.Suggestions), nf.Suggestions)
		}
		for _, s := range nf.Suggestions {
			if _, err := m.Resolve(s); err != nil {
				t.Errorf("Resolve(%q) suggests %q, which does not resolve: %v", ref, s, err)
			}
		}
	}
}

func TestNotFoundErrorMessage(t *testing.T) {
	tests := []struct {
		suggestions []string
		want        string
	}{
		{nil, `"x": no such resource`},
		{[]string{"a"}, `"x": no such resource; did you mean "a"?`},
		{[]string{"a", "b"}, `"x": no such resource; did you mean "a" or "b"?`},
		{[]string{"a", "b", "c"}, `"x": no such resource; did you mean "a", "b" or "c"?`},
	}
	for _, tt := range tests {
		if got := (&restmapper.NotFoundError{Ref: "x", Suggestions: tt.suggestions}).Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestResolveInvalid(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	for _, ref := range []string{"", "  ", "apps/v1/deployments", "deployments/foo", "a b c", "apps/v1 Deployment.apps"} {
		if _, err := m.Resolve(ref); !errors.Is(err, restmapper.ErrInvalidReference) {
			t.Errorf("Resolve(%q) error = %v, want ErrInvalidReference", ref, err)
		}
	}
	if _, err := m.ResolveKind("apps/v1/x", "Deployment"); !errors.Is(err, restmapper.ErrInvalidReference) {
		t.Errorf("ResolveKind with a bad apiVersion: %v, want ErrInvalidReference", err)
	}
	if _, err := m.ResolveKind("apps/v1", ""); !errors.Is(err, restmapper.ErrInvalidReference) {
		t.Errorf("ResolveKind without kind: %v, want ErrInvalidReference", err)
	}
}

// TestNameRoundTrips checks that every resource's canonical name resolves
// back to it, and a few names by hand.
func TestNameRoundTrips(t *testing.T) {
	rs := testResources(t)
	m := restmapper.New(restmapper.NewStatic(rs), restmapper.Options{})
	for _, r := range rs {
		name := m.Name(r)
		got, err := m.Resolve(name)
		if err != nil {
			t.Errorf("Resolve(Name(%s) = %q): %v", r.GVR, name, err)
			continue
		}
		if got.GVR != r.GVR {
			t.Errorf("Resolve(Name(%s) = %q) = %s", r.GVR, name, got.GVR)
		}
	}
	for ref, want := range map[string]string{
		"cm":                               "configmaps",
		"deploy":                           "deployments.apps",
		"events.events.k8s.io":             "events.events.k8s.io",
		"hpa.v1.autoscaling":               "horizontalpodautoscalers.v1.autoscaling",
		"cert":                             "certificates.cert-manager.io",
		"gizmos.v1beta1.example.kreact.io": "gizmos.v1beta1.example.kreact.io",
	} {
		r, err := m.Resolve(ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", ref, err)
			continue
		}
		if got := restmapper.Name(r); got != want {
			t.Errorf("Name(Resolve(%q)) = %q, want %q", ref, got, want)
		}
	}
}

// countingSource is a Source whose snapshot tests can replace and which
// counts refresh requests.
type countingSource struct {
	mu       sync.Mutex
	snap     *discovery.Snapshot
	requests atomic.Int32
}

func (s *countingSource) Snapshot() *discovery.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}
func (s *countingSource) set(rs []apiresource.Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = restmapper.NewStatic(rs).Snapshot()
}
func (s *countingSource) Subscribe(func(discovery.Diff)) func() { return func() {} }
func (s *countingSource) RequestRefresh()                       { s.requests.Add(1) }

func TestMissRequestsOneRefreshPerSnapshot(t *testing.T) {
	src := &countingSource{}
	src.set(restmapper.Builtin())
	m := restmapper.New(src, restmapper.Options{})

	// Many lookups of the same unknown name, some at once, ask once.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := m.Resolve("gizmos"); err == nil {
				t.Error("gizmos resolved before its CRD exists")
			}
		})
	}
	wg.Wait()
	if n := src.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests after repeated misses, want 1", n)
	}
	// Hits never ask.
	for range 5 {
		if _, err := m.Resolve("deploy"); err != nil {
			t.Fatal(err)
		}
	}
	if n := src.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests after hits, want 1", n)
	}

	// The same snapshot (a refresh that found nothing new keeps the
	// pointer) keeps the negative answer.
	if _, err := m.Resolve("gizmos"); err == nil {
		t.Fatal("gizmos resolved")
	}
	if n := src.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests, want 1", n)
	}

	// A new snapshot with the CRD answers anew.
	src.set(testResources(t))
	r, err := m.Resolve("gizmos")
	if err != nil {
		t.Fatalf("after the CRD appeared: %v", err)
	}
	if r.GVR != gvr("example.kreact.io", "v1", "gizmos") {
		t.Errorf("gizmos = %s", r.GVR)
	}
	if n := src.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests, want 1", n)
	}
}

func TestResolveKindMissRequestsRefresh(t *testing.T) {
	src := &countingSource{}
	src.set(restmapper.Builtin())
	m := restmapper.New(src, restmapper.Options{})
	for range 3 {
		if _, err := m.ResolveKind("example.kreact.io/v1", "Gizmo"); err == nil {
			t.Fatal("Gizmo resolved")
		}
	}
	if n := src.requests.Load(); n != 1 {
		t.Fatalf("%d refresh requests, want 1", n)
	}
}

func TestStaticSource(t *testing.T) {
	rs := testResources(t)
	// Out of order on purpose: core last, a non-preferred version first.
	shuffled := append([]apiresource.Resource{}, rs[len(rs)-1])
	shuffled = append(shuffled, rs[15:len(rs)-1]...)
	shuffled = append(shuffled, rs[:15]...)
	src := restmapper.NewStatic(shuffled)
	snap := src.Snapshot()
	if snap != src.Snapshot() {
		t.Error("Snapshot changes pointer")
	}
	if snap.Resources[0].GVR.Group != "" {
		t.Errorf("first resource %s, want the core group first", snap.Resources[0].GVR)
	}
	if _, ok := snap.Lookup(gvr("apps", "v1", "deployments")); !ok {
		t.Error("Lookup(deployments) failed")
	}
	cancel := src.Subscribe(func(discovery.Diff) { t.Error("static source published a diff") })
	src.RequestRefresh()
	cancel()

	m := restmapper.New(src, restmapper.Options{})
	if r, err := m.Resolve("events"); err != nil || r.GVR != gvr("", "v1", "events") {
		t.Errorf("events = %v, %v; want core events whatever the input order", r.GVR, err)
	}
}

func TestAmbiguousShortNameWarns(t *testing.T) {
	var logs bytes.Buffer
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		if _, err := m.Resolve("wd"); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings for an ambiguous short name resolved three times, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "widgets.a.example.com") || !strings.Contains(logs.String(), "widgets.b.example.com") {
		t.Errorf("warning does not name both resources:\n%s", logs.String())
	}
	logs.Reset()
	if _, err := m.Resolve("widgets"); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("a full name warned:\n%s", logs.String())
	}
}

// TestHugeReferenceIsRefusedAtOnce: resolving a 1 MB name used to take
// seconds of edit distances for its did-you-mean. A reference over
// MaxReferenceLength is refused before any of that, with a message that
// quotes only its start.
func TestHugeReferenceIsRefusedAtOnce(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	huge := strings.Repeat("x", 1<<20)
	for name, resolve := range map[string]func() error{
		"Resolve":                   func() error { _, err := m.Resolve(huge); return err },
		"Resolve apiVersion Kind":   func() error { _, err := m.Resolve("apps/v1 " + huge); return err },
		"ResolveKind":               func() error { _, err := m.ResolveKind("apps/v1", huge); return err },
		"ResolveKind of apiVersion": func() error { _, err := m.ResolveKind(huge+"/v1", "Deployment"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := resolve()
			if !errors.Is(err, restmapper.ErrInvalidReference) {
				t.Fatalf("error = %.300v, want ErrInvalidReference", err)
			}
			msg := err.Error()
			if len(msg) > 300 || !strings.Contains(msg, "x…\"") || !strings.Contains(msg, "over the limit of 512") {
				t.Errorf("message of %d bytes: %.400s", len(msg), msg)
			}
		})
	}
}

// TestLongReferenceWithinLimit: a reference under the limit but longer
// than any served name by more than an edit or three resolves to nothing
// and gets no suggestion; its message quotes only its start.
func TestLongReferenceWithinLimit(t *testing.T) {
	m := restmapper.New(restmapper.NewStatic(testResources(t)), restmapper.Options{})
	for _, ref := range []string{strings.Repeat("deployments", 46), strings.Repeat("d", 300) + ".apps", strings.Repeat("D", 500)} {
		_, err := m.Resolve(ref)
		var nf *restmapper.NotFoundError
		if !errors.As(err, &nf) || len(nf.Suggestions) != 0 {
			t.Fatalf("Resolve(%d bytes) = %v, want a NotFoundError without suggestions", len(ref), err)
		}
		if msg := err.Error(); len(msg) > 200 || !strings.Contains(msg, "…\": no such resource") {
			t.Errorf("message = %s", msg)
		}
	}
	if _, err := m.Resolve(strings.Repeat("x", restmapper.MaxReferenceLength)); errors.Is(err, restmapper.ErrInvalidReference) {
		t.Errorf("a reference of exactly MaxReferenceLength bytes is refused: %v", err)
	}
}
