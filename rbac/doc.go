// Package rbac computes the least-privilege RBAC that kreact needs to run
// a rule set, for `kreact rbac`.
//
// It grants exactly what kreact run does with the rules: the informers of
// delivery.Plan (get, list, watch, cluster-wide or in the watched
// namespaces when every informer of a resource is namespaced; none for
// the spec.watch of a rule with admission handlers only), spec.reads,
// the verbs of spec.permissions in the namespaces they apply in (apply
// needs create and patch, condition get and patch on RESOURCE/status, or
// on the resource itself where it has no status subresource, as
// discovery or the CRD describes it: actions.ConditionSubresource),
// events, the subresources a script names in its
// patch or apply calls (for the resources of that verb), update on the
// finalizers of what a rule reads when its script sets owner references
// (for OwnerReferencesPermissionEnforcement), and
// what kreact itself needs (discovery's CRD and APIService informers, the
// Leases of --leader-elect or --shards, and for rules with admission
// handlers the webhook configurations it applies and the Secret of its
// shared admission CA, and to run teams' Rules, with rule objects,
// impersonate on serviceaccounts). Needs is the same computation for one rule, before
// the rules' needs are merged into roles: what kreact run asks the API
// server about when the rule starts (package engine). Every policy rule carries a
// comment naming the rules that need it and for what, and the output is
// deterministic: sorted by namespace, API group and resource. Write
// prints it as `kreact rbac` does, after the warnings of WideActions.
package rbac
