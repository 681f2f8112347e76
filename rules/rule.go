package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
)

// APIVersion and Kind are the only apiVersion and kind a rule document may
// have; Group and Version are the API group and version of rule objects
// (CRDs), the same.
const (
	Group      = "kreact.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "Rule"
)

// Defaults and limits of the spec fields. A field that is left out (or set
// to null) gets its default; a value outside its limits is an error.
const (
	DefaultWorkers   = 1
	MaxWorkers       = 64
	DefaultTimeout   = time.Second
	MinTimeout       = time.Millisecond
	MaxTimeout       = time.Minute
	DefaultRetries   = 5
	MaxRetries       = 100
	DefaultRateLimit = 10.0
	MaxRateLimit     = 10000.0
	MaxBurst         = 100000
	MinEvery         = time.Second
	MaxEvery         = 24 * time.Hour
	// DefaultMaxActions is how many actions one handler call may ask for;
	// a call that asks for more fails and queues none.
	DefaultMaxActions = 100
	MaxMaxActions     = 10000
	// DefaultActionWorkers is how many actions of a rule run at once, on
	// different objects.
	DefaultActionWorkers = 8
	MaxActionWorkers     = 64
	// DefaultMemoryLimit is the memory one handler call may take before
	// it is stopped, when spec.memoryLimit does not say; scripting's
	// runtimes take it as their default (scripting.DefaultMemoryLimit).
	DefaultMemoryLimit = 64 << 20
	MinMemoryLimit     = 1 << 20
	MaxMemoryLimit     = 4 << 30
	// MaxQueuedChanges bounds the changes a rule with delivery "every"
	// keeps waiting; what comes beyond is dropped, logged and counted.
	MaxQueuedChanges = 10000
)

// MaxScriptSize bounds a rule's script file, in bytes: the limit of
// scripting.Compile (scripting.MaxSourceSize), which also bounds inline
// scripts.
const MaxScriptSize = 1 << 20

// ScriptLang is the language a rule's script is written in.
type ScriptLang string

// The values of spec.scriptLang.
const (
	// ScriptJavaScript is the default.
	ScriptJavaScript ScriptLang = "js"
	// ScriptTypeScript is compiled to JavaScript when the rule is loaded;
	// types are removed, not checked.
	ScriptTypeScript ScriptLang = "ts"
)

// Delivery says how the changes of one object reach a rule's handlers.
type Delivery string

// The values of spec.delivery.
const (
	// DeliverLatest coalesces the changes of an object that the script
	// has not seen yet into one call with the latest state: the default.
	DeliverLatest Delivery = "latest"
	// DeliverEvery calls the script for every change, intermediate
	// states included, from a queue bounded by MaxQueuedChanges.
	DeliverEvery Delivery = "every"
)

// TickScope says where a rule's onTick runs under kreact run --shards.
type TickScope string

// The values of spec.tickScope.
const (
	// TickCluster makes each tick once for the cluster: on the one
	// replica that owns the start of the hash space (the default).
	TickCluster TickScope = "cluster"
	// TickReplica makes each tick on every replica, for work that is
	// about the replica's own shard.
	TickReplica TickScope = "replica"
)

// AllEvents returns the events spec.events may list, the changes of an
// object, in their canonical order: the default of spec.events. Each
// calls the script function of the same name: onAdd(obj, ctx),
// onUpdate(oldObj, obj, ctx), onDelete(obj, ctx).
func AllEvents() []event.Type {
	return []event.Type{event.Add, event.Update, event.Delete}
}

// Rule is one validated rule document. Parse, ParseFile and Load return
// rules whose every field is set: defaults are filled in, Script holds the
// script text even when it came from ScriptFile.
//
// A Rule is plain data and not changed after loading; any number of
// goroutines may read it.
type Rule struct {
	// Name is metadata.name, unique across everything loaded together.
	Name string
	// Description is metadata.description, free text.
	Description string
	// Pos is where metadata.name is, or where the document starts when
	// the name is missing.
	Pos diag.Position

	// Watch lists the resources whose changes call the script; at least
	// one.
	Watch []Watch
	// Events are the changes that call the script, in canonical order
	// (add, update, delete) and without duplicates.
	Events []event.Type
	// IgnoreChanges are field paths an update may touch without calling
	// onUpdate; see IgnoredPaths for the complete set.
	IgnoreChanges []FieldPath
	// EventsPos is where spec.events is written, and IgnoreChangesPos[i]
	// where IgnoreChanges[i] is; zero when not written.
	EventsPos        diag.Position
	IgnoreChangesPos []diag.Position
	// Reads are resources, besides the watched ones, that the script may
	// read from the cache with kreact.get and kreact.list.
	Reads []Ref
	// Permissions are what the rule's actions may do to which resources.
	// Anything else is refused when the action is asked for.
	Permissions []Permission
	// HTTP are the URL prefixes kreact.http may call; see AllowsHTTP.
	HTTP []string

	// Script is the JavaScript source, inline or read from ScriptFile.
	Script string
	// ScriptFile is spec.scriptFile as written (relative to the rule file),
	// empty for an inline script.
	ScriptFile string
	// ScriptLang is the script's language: spec.scriptLang, or TypeScript
	// for a scriptFile ending in .ts.
	ScriptLang ScriptLang
	// ScriptPos is where line 1, column 1 of Script is: the script file
	// (path as opened, 1, 1), or for an inline script the first content
	// line of the YAML value and its indentation. ScriptPosition maps a
	// position in Script through it.
	ScriptPos diag.Position

	// Every, if not zero, is how often the script's onTick(ctx) is called:
	// periodic sweeps such as TTL expiry, where no change arrives when the
	// time is up.
	Every time.Duration
	// Schedule, if not empty, is a calendar schedule of onTick(ctx) in
	// cron syntax ("0 3 * * 1-5", "@daily", optionally "CRON_TZ=ZONE ..."),
	// checked by ParseSchedule; at most one of Every and Schedule is set.
	// (A broken rule of LoadAll holds what was written, checked or not.)
	Schedule string
	// TimeZone is spec.timeZone, the IANA zone of Schedule; empty means
	// UTC, or the schedule's CRON_TZ.
	TimeZone string
	// TickScope is spec.tickScope: where onTick runs with --shards; empty
	// means TickCluster.
	TickScope TickScope
	// Workers is how many script runtimes run handlers of this rule in
	// parallel.
	Workers int
	// Timeout bounds each handler call.
	Timeout time.Duration
	// Retries is how many times a failed handler call, and a failed
	// action, is retried before it is given up.
	Retries int
	// MaxActions is how many actions one handler call may ask for.
	MaxActions int
	// MemoryLimit is the memory one handler call may take, in bytes,
	// before it is stopped (scripting.RuntimeOptions.MemoryLimit).
	MemoryLimit int64
	// ActionWorkers is how many of the rule's actions run at once (on
	// different objects; actions on one object keep their order).
	ActionWorkers int
	// Delivery is how the changes of one object reach the handlers.
	Delivery Delivery
	// RateLimit is the rule's sustained action rate, per second.
	RateLimit float64
	// Burst is how many actions may run at once above RateLimit.
	Burst int
	// DryRun sends every action of the rule with dryRun=All (HTTP: logs
	// instead of sending). The --dry-run flag turns it on for all rules.
	DryRun bool
	// Finalizer puts the finalizer kreact.dev/NAME on the watched objects,
	// so that onDelete runs for every delete, even one that happens while
	// kreact is away; see package finalizers.
	Finalizer bool
	// Admission is spec.admission: how the API server calls the
	// script's admission handlers (onValidate, onMutate), if it has any.
	Admission Admission
	// Isolate runs the rule in a kreact process of its own, started by
	// kreact run at the idle CPU priority, so that what its scripts cost
	// (CPU, garbage, pauses of Go's collector) cannot slow the other
	// rules; see package isolation. kreact test runs it as any other.
	Isolate bool
	// RecordEvents records a Warning Event on the object when one of the
	// rule's calls is given up, or one of its actions fails, at most one
	// per object and minute (package delivery), so that kubectl describe
	// shows why the rule did not do its job.
	RecordEvents bool

	// Source is the path of the YAML file the rule came from, or the
	// object's ObjectRef.Source.
	Source string
	// Namespace is the namespace of a Rule object, a team's rule, which
	// is confined to it (CheckConfined); empty for rule files and
	// ClusterRules.
	Namespace string
	// ServiceAccountName is spec.serviceAccountName: the ServiceAccount
	// of Namespace whose rights bound the Rule's actions (kreact
	// impersonates it). Only a Rule may have one; empty means the one
	// kreact run's --default-service-account names (package engine,
	// Identity).
	ServiceAccountName string

	// compiled is the script as package scripting compiled it
	// (Compiled), shared by everything that holds this version of the
	// rule. Unexported, so that Fingerprint and the JSON of a rule leave
	// it out.
	compiled atomic.Value // *compiledScript
}

// FailurePolicy is what the API server does when an admission handler
// cannot answer: kreact is down, the call failed or ran out of time.
type FailurePolicy string

// The values of spec.admission.failurePolicy, as admissionregistration/v1
// spells them.
const (
	// FailIgnore lets the request through: the default, so that kreact
	// being down never blocks the cluster unless a rule asks for it.
	FailIgnore FailurePolicy = "Ignore"
	// FailFail refuses the request.
	FailFail FailurePolicy = "Fail"
)

// AdmissionMode is spec.admission.mode.
type AdmissionMode string

// The values of spec.admission.mode.
const (
	// AdmissionEnforce denies and changes requests as the handlers say:
	// the default.
	AdmissionEnforce AdmissionMode = "enforce"
	// AdmissionAudit allows every request unchanged, and logs and counts
	// what the handlers would have denied or changed.
	AdmissionAudit AdmissionMode = "audit"
)

// Defaults and limits of spec.admission.timeout: how long the API server
// waits for an answer, in whole seconds.
const (
	DefaultAdmissionTimeout = 5 * time.Second
	MaxAdmissionTimeout     = 10 * time.Second
)

// Admission is spec.admission. Which requests reach the handlers is not
// written here but derived from the rule (spec.watch, spec.events): see
// package admission.
type Admission struct {
	// FailurePolicy applies when a handler cannot answer.
	FailurePolicy FailurePolicy
	// Timeout is how long the API server waits for an answer, whole
	// seconds between 1s and MaxAdmissionTimeout; it should exceed
	// spec.timeout.
	Timeout time.Duration
	// Mode is enforce or audit.
	Mode AdmissionMode
	// Pos is where spec.admission is written; zero when it is left out.
	Pos diag.Position
}

// Watch is one entry of spec.watch: a resource, and optionally the
// namespaces and selectors that narrow what is watched.
type Watch struct {
	// Resource is the resource as the user typed it, e.g. "deploy",
	// "deployments.apps", "apps/v1 Deployment"; Resolve turns it into a
	// apiresource.Resource.
	Resource string
	// Namespaces limits the watch to these namespaces; empty means all
	// namespaces (and is required for cluster-scoped resources).
	Namespaces []string
	// LabelSelector and FieldSelector are in kubectl syntax and have been
	// checked with labels.Parse and fields.ParseSelector.
	LabelSelector string
	FieldSelector string
	// Fields are spec.watch[].fields: the paths the script reads of the
	// objects, besides the identity metadata every projection keeps
	// (projection.Identity). FieldsSet tells "fields: []" (identity
	// only) from no fields at all (whole objects); see Projection.
	Fields    []FieldPath
	FieldsSet bool
	// Pos is where Resource is written; FieldsPos where fields is, when
	// FieldsSet; NamespacesPos, LabelSelectorPos and FieldSelectorPos
	// where those are, when written (zero otherwise). kreact explain and
	// kreact test --explain point at them.
	Pos              diag.Position
	FieldsPos        diag.Position
	NamespacesPos    diag.Position
	LabelSelectorPos diag.Position
	FieldSelectorPos diag.Position
}

// Projection returns what the entry's informer must keep of each object:
// whole objects without spec.watch[].fields, else the listed paths and
// the identity metadata.
func (w Watch) Projection() projection.Fields {
	if !w.FieldsSet {
		return projection.Fields{}
	}
	paths := make([]projection.Path, len(w.Fields))
	for i, p := range w.Fields {
		paths[i] = projection.Path(p)
	}
	return projection.New(paths...)
}

// Ref is a resource reference as written, with its position.
type Ref struct {
	Name string
	Pos  diag.Position
}

// Permission is one entry of spec.permissions: the verbs the rule's actions
// may use on the resources.
//
// The event verb is granted on the resource of the object the Event is
// about (the involved object), not on "events": {resources: [deployments],
// verbs: [event]} lets the rule record Events about Deployments.
//
// Namespaces limits where the verbs apply to namespaced resources: nil
// (the field left out) means the namespaces the rule watches, when every
// namespaced watch entry names some, and all namespaces otherwise (see
// Resolve); AllNamespaces ("*") means all namespaces. They do not apply
// to cluster-scoped resources.
type Permission struct {
	Resources []Ref
	Verbs     []actions.Verb
	// Namespaces are the namespaces the entry names, sorted, without
	// duplicates; nil when it names none or "*".
	Namespaces []string
	// AllNamespaces is true for namespaces: ["*"].
	AllNamespaces bool
	// Pos is where the entry starts.
	Pos diag.Position

	namespacesPos diag.Position
}

// PermissionVerbs returns the verbs spec.permissions accepts, in canonical
// order. actions.HTTP is not one of them: HTTP calls are allowed by
// spec.http.
func PermissionVerbs() []actions.Verb {
	return []actions.Verb{actions.Create, actions.Apply, actions.Patch, actions.Delete, actions.Event, actions.SetCondition}
}

// Ticks reports whether the rule calls onTick: it has spec.every or
// spec.schedule.
func (r *Rule) Ticks() bool { return r.Every > 0 || r.Schedule != "" }

// Handles reports whether the rule reacts to event e.
func (r *Rule) Handles(e event.Type) bool { return slices.Contains(r.Events, e) }

// IgnoredPaths returns the paths an update may change without calling
// onUpdate: spec.ignoreChanges plus metadata.resourceVersion and
// metadata.managedFields, which are always ignored. An update whose every
// change is at or below one of these paths is not delivered.
func (r *Rule) IgnoredPaths() []FieldPath {
	paths := make([]FieldPath, 0, len(r.IgnoreChanges)+2)
	paths = append(paths,
		FieldPath{"metadata", "resourceVersion"},
		FieldPath{"metadata", "managedFields"},
	)
	// A map, not a scan of what came before: spec.ignoreChanges may be
	// long, and a scan made this quadratic.
	seen := make(map[string]bool, cap(paths))
	for _, p := range paths {
		seen[p.key()] = true
	}
	for _, p := range r.IgnoreChanges {
		if k := p.key(); !seen[k] {
			seen[k] = true
			paths = append(paths, p)
		}
	}
	return paths
}

// ScriptPosition maps a 1-based line and column in Script (as a JavaScript
// engine reports them) to the position in the file the user edits. It is
// exact for script files and for inline scripts written as literal block
// scalars (script: |); for other inline styles only line 1 is exact.
func (r *Rule) ScriptPosition(line, col int) diag.Position {
	p := r.ScriptPos
	if line < 1 || p.Line < 1 {
		return diag.Position{File: p.File}
	}
	out := diag.Position{File: p.File, Line: p.Line + line - 1}
	if col >= 1 && p.Col >= 1 {
		out.Col = p.Col + col - 1
	}
	return out
}

// String returns the rule's name and where it is defined, for logs.
func (r *Rule) String() string {
	return fmt.Sprintf("%s (%s)", r.Name, r.Pos)
}

// Fingerprint identifies the rule's content: two rules with the same
// fingerprint are the same version of a rule. The engine restarts a rule
// whose fingerprint changed on reload; package isolation remembers which
// version of a rule misbehaved by it.
func (r *Rule) Fingerprint() string {
	data, _ := json.Marshal(r)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
