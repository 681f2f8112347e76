// Type declarations for kreact rule scripts, for editor completion and
// checking. Reference them from a rule file with
//
//   /// <reference path="path/to/kreact.d.ts" />
//
// Scripts run in strict mode in goja (ES2020-ish): no require, no imports,
// no file system or network; everything outside the script goes through
// `kreact`. Every call has a deadline (1s by default).
//
// Everything here is global, and named so as not to clash with the DOM
// declarations of tsc's default library (hence KubeNode, not Node).
// `export` before a top-level declaration (export function onAdd...) makes
// tsc check each rule file as a module of its own, so that the helpers
// of two rules checked together do not clash; kreact ignores it. Scripts
// have ES2020's library (Object.entries, Map...) whatever target tsc
// checks for:
/// <reference lib="es2020" />

/** JSON data: what objects contain and what actions accept. */
type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };

/**
 * A Kubernetes object as a script sees it. Objects passed to handlers and
 * returned by kreact.get/list are read-only views of the informer cache:
 * any write or delete throws a TypeError ("object is read-only; use
 * kreact.clone(obj)"). Keys are enumerated in sorted order.
 *
 * With spec.watch[].fields, the objects passed to handlers hold only the
 * listed paths and the identity: apiVersion, kind and metadata's name,
 * namespace, uid, resourceVersion, labels, annotations, ownerReferences,
 * deletionTimestamp and finalizers. Every other field is undefined, even
 * where these types declare it (kreact test fails a case that reads one
 * the whole object has). kreact.get and kreact.list return whole objects.
 */
interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly spec?: any;
  readonly status?: any;
  readonly data?: { readonly [key: string]: string };
  readonly [key: string]: any;
}

interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generateName?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: { readonly [key: string]: string };
  readonly annotations?: { readonly [key: string]: string };
  readonly ownerReferences?: ReadonlyArray<{
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly uid: string;
    readonly controller?: boolean;
    readonly blockOwnerDeletion?: boolean;
  }>;
  readonly finalizers?: ReadonlyArray<string>;
  readonly [key: string]: any;
}

/**
 * Typed views of common built-in kinds, for handlers that watch them:
 *   function onUpdate(oldCm: ConfigMap, cm: ConfigMap, ctx: Ctx) { ... }
 * Custom resources have no Go or TypeScript types here: use
 * CustomResource, whose spec and status are `unknown` until you check them.
 * With spec.watch[].fields, only the listed paths and the identity
 * metadata are present (see KubeObject).
 */
interface ConfigMap extends KubeObject {
  readonly data?: { readonly [key: string]: string };
  readonly binaryData?: { readonly [key: string]: string };
}

interface Secret extends KubeObject {
  readonly type?: string;
  /** Base64-encoded values. */
  readonly data?: { readonly [key: string]: string };
}

interface Namespace extends KubeObject {
  readonly status?: { readonly phase?: "Active" | "Terminating" };
}

interface PodTemplateSpec {
  readonly metadata?: Partial<ObjectMeta>;
  readonly spec: {
    readonly containers: ReadonlyArray<{
      readonly name: string;
      readonly image?: string;
      readonly env?: ReadonlyArray<{
        readonly name: string;
        readonly value?: string;
        readonly valueFrom?: { readonly [key: string]: any };
      }>;
      readonly envFrom?: ReadonlyArray<{
        readonly configMapRef?: { readonly name: string };
        readonly secretRef?: { readonly name: string };
      }>;
      readonly [key: string]: any;
    }>;
    readonly volumes?: ReadonlyArray<{
      readonly name: string;
      readonly configMap?: { readonly name: string };
      readonly secret?: { readonly secretName: string };
      readonly [key: string]: any;
    }>;
    readonly [key: string]: any;
  };
}

interface Deployment extends KubeObject {
  readonly spec: {
    readonly replicas?: number;
    readonly selector: { readonly matchLabels?: { readonly [key: string]: string } };
    readonly template: PodTemplateSpec;
    readonly [key: string]: any;
  };
  readonly status?: { readonly replicas?: number; readonly readyReplicas?: number; readonly [key: string]: any };
}

interface Pod extends KubeObject {
  readonly spec: PodTemplateSpec["spec"] & { readonly nodeName?: string };
  readonly status?: {
    readonly phase?: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
    readonly containerStatuses?: ReadonlyArray<{ readonly name: string; readonly restartCount: number; readonly state?: { readonly [key: string]: any } }>;
    readonly [key: string]: any;
  };
}

/** A Node (named KubeNode: the DOM library declares a Node of its own). */
interface KubeNode extends KubeObject {
  readonly status?: {
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: "True" | "False" | "Unknown"; readonly reason?: string }>;
    readonly [key: string]: any;
  };
}

/** A custom resource: nothing is known of its spec or status. */
interface CustomResource extends KubeObject {
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** A writable copy of a KubeObject, as kreact.clone returns it. */
type Mutable<T> = T extends ReadonlyArray<infer E>
  ? Mutable<E>[]
  : T extends object
    ? { -readonly [K in keyof T]: Mutable<T[K]> }
    : T;

/** The object an action acts on. */
type Target =
  /** An object: apiVersion, kind, metadata.namespace, metadata.name (and metadata.uid, when known). */
  | KubeObject
  | Mutable<KubeObject>
  /** A resource as kubectl takes it: "deploy", "deployments.apps", "configmaps". */
  | { resource: string; namespace?: string; name: string }
  | { apiVersion: string; kind: string; namespace?: string; name: string };

/** The last argument of every handler. Read-only. */
interface Ctx {
  /** The rule's name. */
  readonly rule: string;
  readonly event: "add" | "update" | "delete" | "tick" | "timer" | "validate" | "mutate";
  /** True for an add that comes from the initial list of a watch. */
  readonly initial: boolean;
  /**
   * On update, the paths that changed, sorted: "spec.replicas",
   * "metadata.labels.app", 'metadata.annotations["example.com/x"]'.
   * Paths go at most three keys deep; deeper changes and changed lists are
   * reported at that depth. Empty for add, delete and tick.
   */
  readonly changed: ReadonlyArray<string>;
  /** The watched resource, "deployments.apps"-style ("configmaps" for the core group); "" for tick. */
  readonly resource: string;
}

/**
 * The handlers a rule script may declare at top level (each optional), as
 * `function onAdd(obj, ctx) {...}` or `const onAdd = (obj, ctx) => {...}`,
 * with or without `export` in front.
 * In a checked JavaScript file, type them with JSDoc:
 *
 *   /** @type {OnUpdate} *\/
 *   const onUpdate = (oldObj, newObj, ctx) => { ... };
 *
 * or `/** @param {KubeObject} obj @param {Ctx} ctx *\/ function onAdd(obj, ctx) {...}`.
 */
/** Called when an object appears (also for each object of the initial list). */
type OnAdd = (obj: KubeObject, ctx: Ctx) => void | Promise<void>;
/** Called when an object changes in a way that matters (ctx.changed is not empty). */
type OnUpdate = (oldObj: KubeObject, newObj: KubeObject, ctx: Ctx) => void | Promise<void>;
/** Called when an object is deleted, with its last known state. */
type OnDelete = (obj: KubeObject, ctx: Ctx) => void | Promise<void>;
/** Called every spec.every or on spec.schedule, without an object (ctx.event is "tick", ctx.resource is ""). */
type OnTick = (ctx: Ctx) => void | Promise<void>;
/** Called when a timer set with kreact.after(obj, delay) is due, with the object's latest state (ctx.event is "timer"). */
type OnTimer = (obj: KubeObject, ctx: Ctx) => void | Promise<void>;

/**
 * The request an admission handler decides on, read-only. The API server
 * waits for the answer before it stores anything.
 */
interface AdmissionRequest {
  readonly operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  /** The object's name; "" on a CREATE that uses metadata.generateName. */
  readonly name: string;
  /** The object's namespace; "" for cluster-scoped objects. */
  readonly namespace: string;
  /** The resource, "deployments.apps"-style ("configmaps" for the core group). */
  readonly resource: string;
  /** The subresource written ("status", "scale"), or "". */
  readonly subResource: string;
  /** The object to be stored; null on DELETE. */
  readonly object: KubeObject | null;
  /** The stored object; null on CREATE. */
  readonly oldObject: KubeObject | null;
  /** True when the API server will not store the change (kubectl --dry-run=server): count on nothing happening. */
  readonly dryRun: boolean;
  /** Who asks, as the API server authenticated them. */
  readonly userInfo: {
    readonly username?: string;
    readonly uid?: string;
    readonly groups?: ReadonlyArray<string>;
    readonly extra?: { readonly [key: string]: ReadonlyArray<string> };
  };
}

/**
 * Admission handlers run before the change is stored and have no side
 * effects: the actions (create, apply, patch, jsonPatch, delete, event,
 * http) and kreact.after throw when called from them; kreact.get and
 * kreact.list read the cache. A handler that throws or runs out of time
 * answers by the rule's failure policy.
 */
/**
 * Called to validate a request (ctx.event is "validate"). Return nothing
 * (or true) to allow it, or a message to deny it: kubectl shows the message,
 * prefixed with the rule's name.
 */
type OnValidate = (req: AdmissionRequest, ctx: Ctx) => string | true | void | Promise<string | true | void>;
/**
 * Called to change an object before it is stored (ctx.event is "mutate").
 * Return nothing for no change, a JSON merge patch (RFC 7386: null deletes
 * a key), or JSON patch operations (RFC 6902). kreact answers with the JSON
 * patch that makes req.object what the change asks for. A change to
 * apiVersion, kind, metadata.name, metadata.generateName,
 * metadata.namespace or metadata.uid, or an operation that does not apply
 * (a replace or remove of a field the object does not have), fails the call.
 */
type OnMutate = (req: AdmissionRequest, ctx: Ctx) => MutateChange | void | Promise<MutateChange | void>;
type MutateChange =
  | { [key: string]: JSONValue }
  | Array<
      | { op: "add" | "replace" | "test"; path: string; value: JSONValue }
      | { op: "remove"; path: string }
      | { op: "move" | "copy"; from: string; path: string }
    >;

interface ListOptions {
  /** Namespace to list in; all namespaces when omitted. */
  namespace?: string;
  /** A label selector as kubectl takes it: "app=web,tier in (a,b)". */
  labelSelector?: string;
}

interface EventSpec {
  /** Default "Normal". */
  type?: "Normal" | "Warning";
  /** A short CamelCase reason, required. */
  reason: string;
  message?: string;
}

/** A status condition, as kreact.setCondition takes it. */
interface ConditionSpec {
  /** The condition's type, e.g. "Ready"; required. */
  type: string;
  status: "True" | "False" | "Unknown";
  /** A short CamelCase reason, e.g. "Scheduled". */
  reason?: string;
  message?: string;
  /** The metadata.generation this condition describes; default: the target's. */
  observedGeneration?: number;
}

/** Options of apply, patch and jsonPatch. */
interface WriteOptions {
  /** Write a subresource of the object instead of the object itself. */
  subresource?: "status" | "scale";
}

/** The owner option of create and apply. */
interface OwnerOptions {
  /**
   * Make the new object owned by this one: kreact adds the controller
   * reference to it (controller and blockOwnerDeletion true) to
   * metadata.ownerReferences, so that Kubernetes' garbage collector
   * deletes the object with its owner. The owner must carry metadata.uid
   * (the handler's object, or one from kreact.get). A namespaced owner can
   * own only objects of its own namespace, and no cluster-scoped object:
   * such a call throws a TypeError; use spec.finalizer and delete the
   * object in onDelete instead.
   */
  owner?: KubeObject | object;
}

interface HTTPRequest {
  /** An absolute http or https URL; the rule must allow it. */
  url: string;
  /** Default "POST". */
  method?: string;
  headers?: { [name: string]: string };
  /** A string is sent as is; any other value is sent as JSON (with Content-Type: application/json unless set). */
  body?: string | JSONValue;
}

/**
 * The kreact API. Values handed to kreact must be JSON data: functions,
 * symbols, undefined, NaN, Infinity, Maps, cycles... throw a TypeError
 * naming the path ("patch: spec.replicas is NaN"). Dates become RFC 3339
 * strings. Integral numbers are sent as integers.
 *
 * Actions (create, apply, patch, jsonPatch, delete, event, setCondition, http) are
 * queued, not executed: they return undefined at once and run after the
 * handler returns, subject to the rule's permissions (a refusal is thrown
 * as an Error). At most 100 per call by default.
 */
declare const kreact: {
  /** A plain, writable deep copy (JSON semantics). */
  clone<T>(value: T): Mutable<T>;

  /** The object, read-only, or null when it does not exist. namespace is ignored for cluster-scoped resources. */
  get(resource: string, namespace: string | null, name: string): KubeObject | null;
  /** Matching objects, read-only. */
  list(resource: string, options?: ListOptions): ReadonlyArray<KubeObject>;
  /**
   * The object's controller owner (the ownerReference with controller:
   * true, as {owner} sets it), read-only, from the cache; null when it has
   * none, or the cache no longer holds that object (same name, another
   * uid). The rule must watch or read (spec.reads) the owner's resource.
   */
  owner(obj: KubeObject | object): KubeObject | null;

  /** Create an object (metadata.name or metadata.generateName; metadata.namespace for namespaced kinds). */
  create(obj: object, options?: OwnerOptions): void;
  /** Server-side apply an object (field manager "kreact"); metadata.managedFields is dropped. */
  apply(obj: object, options?: WriteOptions & OwnerOptions): void;
  /** JSON merge patch (RFC 7386): null deletes a key. */
  patch(target: Target, mergePatch: { [key: string]: JSONValue }, options?: WriteOptions): void;
  /** JSON patch (RFC 6902). */
  jsonPatch(
    target: Target,
    ops: Array<
      | { op: "add" | "replace" | "test"; path: string; value: JSONValue }
      | { op: "remove"; path: string }
      | { op: "move" | "copy"; from: string; path: string }
    >,
    options?: WriteOptions,
  ): void;
  /** Delete the object. */
  delete(target: Target): void;
  /** Record a Kubernetes Event about the object. */
  event(target: Target, event: EventSpec): void;
  /** Send an HTTP request. */
  http(request: HTTPRequest): void;
  /**
   * Set one condition in the object's status.conditions, the Kubernetes
   * way: when the action runs, kreact reads the object's current
   * conditions from the API server (not the cache), replaces the one of
   * this type (or adds it at the end) and keeps the others;
   * lastTransitionTime moves only when status changes; nothing is written
   * when nothing changed. It goes through the status subresource where
   * the resource has one. observedGeneration defaults to the target's
   * metadata.generation. Needs the `condition` permission (and `patch`
   * on a resource without a status subresource). A condition without
   * type, or with a status other than "True", "False" or "Unknown", throws
   * a TypeError.
   */
  setCondition(target: Target, condition: ConditionSpec): void;

  /** Hex SHA-256 of the value's canonical JSON (sorted keys): hash(obj.data) changes when the data does. */
  hash(value: JSONValue | KubeObject): string;
  /** The host's clock (fixed in tests, moved by their `advance` steps). Date.now() and new Date() use the same clock. */
  now(): Date;
  /**
   * The kreact replica running the script, for log lines and rules that
   * behave per replica. name is its leader-election identity
   * (--leader-elect), its shard identity (--shards), else the host name;
   * leader is true while it holds the leader Lease, or, sharded, while it
   * makes the once-per-cluster ticks; a replica running alone leads.
   * Read it at each call: whether a replica leads changes. In kreact test
   * it is {name: "kreact-test", leader: true}.
   */
  replica(): { readonly name: string; readonly leader: boolean };
  /**
   * Call onTimer(obj, ctx) again for the object of this call once delay has
   * passed, with its latest state: "90s", "10m", "1h30m" (Go durations), a
   * number of milliseconds, or a Date to call at. One timer per object: a
   * later kreact.after replaces the pending one. Like actions, it is armed
   * only if the handler returns normally; it is dropped when the object is
   * deleted, and not kept across a restart (re-arm it in onAdd, which every
   * existing object gets at start). Not in onTick or onDelete. At most a year.
   */
  after(obj: Target, delay: string | number | Date): void;

  /**
   * Do something once per object, across restarts, reloads, leader
   * changes and shard moves: `if (kreact.once(obj)) { ...actions... }`.
   * True when the call's object does not carry the rule's marker, the
   * annotation once.kreact.dev/RULE; the call then writes it, with a
   * patch of the object sent after every other action of the call has
   * succeeded (so the rule needs patch on what it watches). False once the
   * object is marked. Costs one write per object. At least once: if
   * kreact stops (or an action fails) after the actions and before the
   * marker is written, the next call on the object does the work again.
   * Only for the object of the call, not in onTick or onDelete.
   */
  once(obj: Target): boolean;

  /**
   * Log at info level; fields are added as structured attributes. A field
   * that is undefined is logged as "undefined".
   */
  log(message: any, fields?: { [key: string]: JSONValue | undefined }): void;
  warn(message: any, fields?: { [key: string]: JSONValue | undefined }): void;
  error(message: any, fields?: { [key: string]: JSONValue | undefined }): void;
};

/**
 * Logs through the host: arguments are joined with spaces, data printed as
 * JSON. At most 100 records per call. Declared as the DOM library declares
 * it (an interface Console and a var), so that the two merge when both
 * are in a program; the DOM's other methods (console.table...) are not
 * there at run time.
 */
interface Console {
  log(...data: any[]): void;
  info(...data: any[]): void;
  debug(...data: any[]): void;
  warn(...data: any[]): void;
  error(...data: any[]): void;
}
declare var console: Console;
