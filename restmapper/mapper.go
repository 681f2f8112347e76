package restmapper

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/discovery"
)

// Options configures a Mapper. The zero value is usable.
type Options struct {
	// Logger receives a warning when a short name matches resources in more
	// than one group (the highest-priority one is used, as kubectl does).
	// Nil means discard.
	Logger *slog.Logger
}

// ErrInvalidReference is wrapped by the error for a reference that no
// resource could ever match, such as "" or "apps/v1/deployments".
var ErrInvalidReference = errors.New("invalid resource reference")

// MaxReferenceLength bounds, in bytes, a resource reference that Resolve
// and ResolveKind look at. Kubernetes names are far shorter (a plural is a
// DNS label of at most 63 bytes, a group a DNS subdomain of at most 253, a
// version at most 63), so a longer reference is refused at once, before
// any matching or did-you-mean work: a megabyte reference took seconds of
// edit distances.
const MaxReferenceLength = 512

// maxCached bounds the answers remembered per snapshot, so that a stream of
// distinct bad references cannot grow memory without limit.
const maxCached = 4096

// Mapper resolves the resource names users write, the way kubectl does,
// against the latest snapshot of a discovery.Source. It is safe for
// concurrent use; answers are cached until the snapshot changes.
type Mapper struct {
	src discovery.Source
	log *slog.Logger

	mu  sync.Mutex
	idx *index
}

// New returns a Mapper over src.
func New(src discovery.Source, opts Options) *Mapper {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Mapper{src: src, log: log}
}

// index is a snapshot's resources in priority order and the answers given
// for it.
type index struct {
	snap      *discovery.Snapshot
	resources []apiresource.Resource

	mu      sync.Mutex
	answers map[string]answer
}

type answer struct {
	res apiresource.Resource
	err error
}

// current returns the index of the source's latest snapshot.
func (m *Mapper) current() *index {
	snap := m.src.Snapshot()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.idx == nil || m.idx.snap != snap {
		var rs []apiresource.Resource
		if snap != nil {
			rs = prioritize(snap.Resources)
		}
		m.idx = &index{snap: snap, resources: rs, answers: map[string]answer{}}
	}
	return m.idx
}

// answer returns the cached answer for key, or computes and caches it. A
// reference that matches nothing asks the source for a refresh, once per
// snapshot: the negative answer stands until the snapshot changes.
func (m *Mapper) answer(key string, compute func(*index) (apiresource.Resource, error)) (apiresource.Resource, error) {
	idx := m.current()
	idx.mu.Lock()
	a, ok := idx.answers[key]
	idx.mu.Unlock()
	if ok {
		return a.res, a.err
	}
	a.res, a.err = compute(idx)
	idx.mu.Lock()
	_, raced := idx.answers[key]
	if len(idx.answers) >= maxCached {
		clear(idx.answers)
	}
	idx.answers[key] = a
	idx.mu.Unlock()
	var nf *NotFoundError
	if !raced && errors.As(a.err, &nf) {
		m.src.RequestRefresh()
	}
	return a.res, a.err
}

// Resolve returns the resource that ref names, accepting what kubectl
// accepts: a plural, singular or short name or a kind, case-insensitively
// ("deployments", "deployment", "deploy", "Deployment"), optionally with a
// group ("deployments.apps", "Deployment.apps", a group prefix such as
// "storageclasses.storage") or a version and a group
// ("deployments.v1.apps"). It also accepts "apiVersion Kind" as written in
// a manifest ("apps/v1 Deployment"), which it hands to ResolveKind.
//
// Without a version the group's preferred version is chosen. A name served
// by several groups goes to the highest-priority one, as in kubectl: the
// core group first ("events" is v1 events, not events.k8s.io), then the
// groups in discovery order. A full resource name wins over a short name.
// Two deliberate differences from kubectl: a kind without a group
// ("Certificate") is looked for in every group, not only the core one, and
// a short name keeps a version given with it ("hpa.v1.autoscaling" is
// autoscaling/v1; kubectl's shortcut expander drops the version).
//
// An unknown name gives a *NotFoundError with suggestions.
func (m *Mapper) Resolve(ref string) (apiresource.Resource, error) {
	if err := checkLength(ref); err != nil {
		return apiresource.Resource{}, err
	}
	return m.answer("r\x00"+ref, func(idx *index) (apiresource.Resource, error) {
		return m.resolve(idx, ref)
	})
}

// ResolveKind returns the resource that serves kind in apiVersion, as in a
// manifest's apiVersion and kind fields ("apps/v1", "Deployment"; "v1",
// "ConfigMap"). The kind is matched case-insensitively. An empty apiVersion
// matches the kind in any group, by priority.
//
// An unknown kind gives a *NotFoundError with suggestions.
func (m *Mapper) ResolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	if len(apiVersion)+1+len(kind) > MaxReferenceLength {
		return apiresource.Resource{}, checkLength(apiVersion + " " + kind)
	}
	return m.answer("k\x00"+apiVersion+"\x00"+kind, func(idx *index) (apiresource.Resource, error) {
		return idx.resolveKind(apiVersion, kind)
	})
}

// checkLength refuses a reference longer than MaxReferenceLength, quoting
// only its start.
func checkLength(ref string) error {
	if len(ref) > MaxReferenceLength {
		return fmt.Errorf("%s: %w: %d bytes, over the limit of %d", diag.Quote(ref), ErrInvalidReference, len(ref), MaxReferenceLength)
	}
	return nil
}

// Name returns the canonical reference for res, the one kreact prints and
// that Resolve maps back to res: "plural.group" ("deployments.apps"), just
// "plural" for the core group ("configmaps"), and "plural.version.group"
// when res is not its group's preferred version
// ("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io").
func (m *Mapper) Name(res apiresource.Resource) string {
	return Name(res)
}

// Name is Mapper.Name for callers without a Mapper.
func Name(res apiresource.Resource) string {
	gvr := res.GVR
	switch {
	case !res.Preferred:
		return gvr.Resource + "." + gvr.Version + "." + gvr.Group
	case gvr.Group == "":
		return gvr.Resource
	default:
		return gvr.Resource + "." + gvr.Group
	}
}

func (m *Mapper) resolve(idx *index, ref string) (apiresource.Resource, error) {
	trimmed := strings.TrimSpace(ref)
	if f := strings.Fields(trimmed); len(f) == 2 {
		return idx.resolveKind(f[0], f[1])
	}
	if trimmed == "" || strings.ContainsAny(trimmed, "/ \t") {
		return apiresource.Resource{}, fmt.Errorf(`%s: %w; write "deployments", "deployments.apps", "deployments.v1.apps" or "apps/v1 Deployment"`, diag.Quote(ref), ErrInvalidReference)
	}
	lower := strings.ToLower(trimmed)

	// kubectl's order: the argument as a resource (with version, then
	// without), then as a kind (with version, then without).
	full, gr := schema.ParseResourceArg(lower)
	if full != nil {
		if r, ok := m.byResource(idx, full.Resource, full.Group, full.Version); ok {
			return r, nil
		}
	}
	if r, ok := m.byResource(idx, gr.Resource, gr.Group, ""); ok {
		return r, nil
	}
	if full != nil {
		if r, ok := idx.byKind(full.Resource, full.Group, full.Version, false); ok {
			return r, nil
		}
	}
	if r, ok := idx.byKind(gr.Resource, gr.Group, "", true); ok {
		return r, nil
	}
	unknownGroup := gr.Group != "" && !idx.servesGroup(gr.Group) && (full == nil || !idx.servesGroup(full.Group))
	return apiresource.Resource{}, &NotFoundError{Ref: ref, Suggestions: idx.suggest(trimmed, gr), UnknownGroup: unknownGroup}
}

// byResource finds name as a resource in the order kubectl's shortcut
// expander and REST mapper try it: full names (plural, singular) in the
// group, short names in the group, short names in a group the given one is
// a prefix of, then full names the same way. An empty group matches all.
// Within one step the highest-priority resource wins.
func (m *Mapper) byResource(idx *index, name, group, version string) (apiresource.Resource, bool) {
	if name == "" {
		return apiresource.Resource{}, false
	}
	fullName := func(r apiresource.Resource) bool { return r.GVR.Resource == name || r.Singular == name }
	shortName := func(r apiresource.Resource) bool { return slices.Contains(r.ShortNames, name) }
	exact := func(r apiresource.Resource) bool { return group == "" || r.GVR.Group == group }
	prefix := func(r apiresource.Resource) bool { return strings.HasPrefix(r.GVR.Group, group) }
	versioned := func(r apiresource.Resource) bool { return version == "" || r.GVR.Version == version }

	if r, ok := idx.first(func(r apiresource.Resource) bool { return fullName(r) && exact(r) && versioned(r) }); ok {
		return r, true
	}
	steps := []func(apiresource.Resource) bool{
		func(r apiresource.Resource) bool { return shortName(r) && exact(r) && versioned(r) },
	}
	if group != "" {
		steps = append(steps, func(r apiresource.Resource) bool { return shortName(r) && prefix(r) && versioned(r) })
		if version == "" {
			steps = append(steps, func(r apiresource.Resource) bool { return fullName(r) && prefix(r) })
		}
	}
	for i, match := range steps {
		r, ok := idx.first(match)
		if !ok {
			continue
		}
		if i < 2 {
			m.warnAmbiguousShortName(idx, name, r, match)
		}
		return r, true
	}
	return apiresource.Resource{}, false
}

// warnAmbiguousShortName warns when a short name also belongs to a
// resource in another group, as kubectl does.
func (m *Mapper) warnAmbiguousShortName(idx *index, name string, chosen apiresource.Resource, match func(apiresource.Resource) bool) {
	var others []string
	for _, r := range idx.resources {
		if r.GVR.GroupResource() != chosen.GVR.GroupResource() && match(r) && !slices.Contains(others, Name(r)) {
			others = append(others, Name(r))
		}
	}
	if len(others) > 0 {
		m.log.Warn("short name matches more than one resource; using the highest-priority one",
			"shortName", name, "using", Name(chosen), "alsoMatches", others)
	}
}

// servesGroup reports whether any resource of the API group is served.
func (idx *index) servesGroup(group string) bool {
	return slices.ContainsFunc(idx.resources, func(r apiresource.Resource) bool { return r.GVR.Group == group })
}

// byKind finds a resource by its kind, case-insensitively (kind is lower
// case). An empty group matches any group only when anyGroup is set, for
// "Deployment"; kubectl itself would look in the core group only.
func (idx *index) byKind(kind, group, version string, anyGroup bool) (apiresource.Resource, bool) {
	if kind == "" {
		return apiresource.Resource{}, false
	}
	return idx.first(func(r apiresource.Resource) bool {
		return strings.ToLower(r.Kind) == kind &&
			(r.GVR.Group == group || (group == "" && anyGroup)) &&
			(version == "" || r.GVR.Version == version)
	})
}

func (idx *index) resolveKind(apiVersion, kind string) (apiresource.Resource, error) {
	ref := strings.TrimSpace(apiVersion + " " + kind)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" || strings.ContainsAny(kind, "./ \t") {
		return apiresource.Resource{}, fmt.Errorf(`%s: %w; want an apiVersion and a kind such as "apps/v1 Deployment"`, diag.Quote(ref), ErrInvalidReference)
	}
	lower := strings.ToLower(kind)
	if apiVersion == "" {
		if r, ok := idx.byKind(lower, "", "", true); ok {
			return r, nil
		}
	} else if r, ok := idx.byKind(lower, gv.Group, gv.Version, false); ok {
		return r, nil
	}
	return apiresource.Resource{}, &NotFoundError{Ref: ref, Suggestions: idx.suggestKind(gv, kind), UnknownGroup: gv.Group != "" && !idx.servesGroup(gv.Group)}
}

// first returns the highest-priority resource that matches.
func (idx *index) first(match func(apiresource.Resource) bool) (apiresource.Resource, bool) {
	for _, r := range idx.resources {
		if match(r) {
			return r, true
		}
	}
	return apiresource.Resource{}, false
}

// prioritize returns resources in kubectl's priority order: the core group
// first, then groups in order of first appearance; within a group the
// preferred version first, then versions in order of first appearance;
// within a version the given order. A snapshot from discovery.Cache is
// already in this order. Duplicate GVRs keep their first occurrence.
func prioritize(resources []apiresource.Resource) []apiresource.Resource {
	groupRank := map[string]int{"": -1}
	type gvKey = schema.GroupVersion
	versionRank := map[gvKey]int{}
	preferred := map[gvKey]bool{}
	for _, r := range resources {
		gv := r.GVR.GroupVersion()
		if _, ok := groupRank[gv.Group]; !ok {
			groupRank[gv.Group] = len(groupRank)
		}
		if _, ok := versionRank[gv]; !ok {
			versionRank[gv] = len(versionRank)
		}
		if r.Preferred {
			preferred[gv] = true
		}
	}
	out := make([]apiresource.Resource, 0, len(resources))
	seen := map[schema.GroupVersionResource]bool{}
	for _, r := range resources {
		if !seen[r.GVR] {
			seen[r.GVR] = true
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b apiresource.Resource) int {
		ga, gb := a.GVR.GroupVersion(), b.GVR.GroupVersion()
		if c := groupRank[ga.Group] - groupRank[gb.Group]; c != 0 {
			return c
		}
		if pa, pb := preferred[ga], preferred[gb]; pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return versionRank[ga] - versionRank[gb]
	})
	return out
}
