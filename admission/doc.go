// Package admission serves the admission handlers of rule scripts
// (onValidate, onMutate; see package scripting) to the API server, so that
// the rules that react to changes can also guard them before they are
// stored.
//
// # Which requests reach a handler
//
// Nothing new is written for it: Configurations derives a
// ValidatingWebhookConfiguration and a MutatingWebhookConfiguration from
// what the rules say already, one webhook per rule and spec.watch entry:
// the entry's resource and version, its namespaces (a namespaceSelector
// on kubernetes.io/metadata.name), its label selector (an
// objectSelector), and the operations of spec.events. spec.admission adds
// the failure policy (Ignore by default: kreact being down must not block
// the cluster unless a rule asks for it), the timeout and the mode
// (enforce or audit). kube-system and kreact's own namespace, where its
// Pods run (Options.NeverIntercepted: its Service's, its Pod's; none for
// a kreact outside the cluster), are never intercepted, so that kreact
// cannot lock the control plane or itself out. Check refuses, at load
// time and at its position in the rule file, what the API server cannot
// send (admissionregistration.k8s.io, a resource nobody writes), a
// webhook cannot select (a field selector) or the webhooks never
// intercept (one of those namespaces).
// `kreact webhooks` prints the configurations (WriteConfigurations, with
// each rule's Warnings); `kreact run` applies them.
//
// # Answers
//
// A mutating handler returns a change as JSON data: a JSON merge patch
// (RFC 7386) or JSON patch operations (RFC 6902). An AdmissionReview
// response carries only a JSON patch, and the API server applies it to
// the object it sent, so Patch applies the change to that object and
// answers with the difference: the patch the API server gets never
// depends on how the handler spelled its change, and a change that cannot
// apply, or that touches what identifies the object, fails the call
// instead of reaching the API server. A validating handler's message is
// what kubectl shows, prefixed with the rule's name. In audit mode every
// request is allowed unchanged; what would have been denied or changed is
// logged, counted (Observer) and returned as a warning, which kubectl
// prints. A call that fails (throws, times out, returns what cannot be
// used) answers by the failure policy: Fail refuses with the error,
// Ignore allows.
//
// # Rule objects
//
// With ServerOptions.RuleObjects (kreact run --admission-validate-rules)
// the server also checks the rule objects themselves, Rule and
// ClusterRule, as the API server creates or changes them: it listens from
// the start and applies RuleObjectsConfiguration, one webhook sending
// their creates and updates to RuleObjectsPath. The check is not this
// package's (it sits below the engine): kreact run hands it
// validate.CheckObject, the checks of `kreact validate`, so that what
// validate reports refuses the apply, every error one a line in its
// words, and its warnings come back as warnings. The failure policy is
// Ignore: while kreact is down, the CRDs' schema alone checks. An update
// that leaves the spec as it was, or of an object being deleted, is not
// checked, so that a rule stored broken can still be released and
// deleted.
//
// # Server
//
// Server is a lifecycle.Runnable that every replica runs, leader or not,
// and a engine.Loader that follows the rule files. It binds its address,
// gets its certificate and applies the configurations only once a rule
// with admission handlers is loaded (or at start, to check rule
// objects), so that rule sets without any change nothing; it deletes the configurations when the last such rule goes, and
// leaves them when kreact stops. Each rule keeps up to spec.workers
// runtimes of its program, with the rule's timeout, memory limit and
// sandbox; requests wait for a free one until the API server's timeout.
// Handlers read the caches of spec.reads, which every replica then keeps;
// until they have synced, the rule answers by its failure policy and the
// replica is not ready (Synced). LogLoad logs the problems of a load
// as what they are: a rule not served, configurations not applied, no
// rule served.
//
// The certificate comes from files, read again when they change
// (LoadCertificates: cert-manager, a mounted Secret), or is generated
// with a CA whose certificate goes into the caBundle: a CA of the
// process's own (GenerateCertificates), or one that the replicas share
// through a Secret (SharedCA), so that whichever replica applied the
// configurations last, every replica's certificate is trusted;
// CertificateSource picks one of these (kreact run's flags), and
// engine.Follow keeps the server's rules in step with their files.
package admission
