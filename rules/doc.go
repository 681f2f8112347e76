// Package rules reads kreact's rule files: the YAML format in which users
// say which Kubernetes resources to watch, the JavaScript that reacts to
// their changes, and what that script's actions may do. It parses and
// validates files (Parse, ParseFile, Load), checks resource names against a
// cluster (Rule.Resolve), and answers "may this rule do that?" at run time
// (Resolved.Allows, Resolved.Readable, Rule.AllowsHTTP). docs/rules.md at
// the repository's root is the user's reference of the format;
// schema/rule.schema.json (also JSONSchema) describes it for editors, and
// CRDs converts it into the CustomResourceDefinitions of rule objects
// (deploy/crds), so that files and objects share one schema.
//
// # Shape of the format
//
// A rule looks like a Kubernetes object (apiVersion kreact.dev/v1alpha1,
// kind Rule, metadata, spec) because its users write those all day, their
// editors already handle such files, and apiVersion leaves room to change
// the format later with a conversion instead of a guess. A rule file never
// goes to an API server; rule objects (CRDs) carry the same spec. Several rules may share a file, as
// "---"-separated documents; every document in a rules file must be a Rule,
// so a misplaced manifest is an error rather than silently ignored.
//
// A rules file may hold rule objects too, as manifests do: a ClusterRule,
// a Rule with a metadata.namespace (a team's), or a List of them as
// `kubectl get rules -A -o yaml` prints it (status, uid and the like
// ignored). The reader hands each to ParseObject, so that every command
// that reads rule files reads an object as kreact run reads it from the
// cluster, and reports its problems at the object (rule/NS/NAME:
// spec.field: message); the rule's Source is the file all the same. A
// Rule without a namespace is a rule file's document, as it always was.
//
// Each rule declares everything it may touch: the resources it watches
// (spec.watch) and reads (spec.reads), the verbs its actions may use on
// which resources (spec.permissions), and the URL prefixes it may call
// (spec.http). The engine refuses anything else when the script asks for
// it, and the same declarations are what an RBAC generator needs. The event
// verb is granted on the resource of the object an Event is about ({resources:
// [deployments], verbs: [event]}), which says what the rule may comment on;
// recording the Event itself needs create on events, which is the RBAC
// generator's business, not the rule author's.
//
// Permissions are keyed by group and resource, never version, as RBAC is:
// a rule allowed to patch deployments.apps may patch them in any version.
//
// # Strictness and error reporting
//
// A typo in a rule file must not give a rule that quietly does nothing, so
// unknown fields, duplicate fields and values of the wrong YAML type are
// errors. Strings must be strings: 2024 is an integer and must be quoted
// where a string is meant, as kubectl requires. A field that is absent or
// null gets its default.
//
// Whether a rule's script fits the rule (its handlers, spec.events,
// spec.every) is not this package's: scripting.CheckScript compiles the
// script and checks it, and engine.CheckRule is the one check of a rule
// that every command makes. This package runs no script, so what only
// reads rules (package delivery among them) does not import the
// JavaScript runtime.
//
// Every problem is reported at once, as a diag.ErrorList of
// "file:line:col: message" sorted by position, in the style of go/scanner:
// fixing a file should take one round trip, not one per mistake. To have a
// position for every value, documents are decoded into yaml.v3 Node trees
// and walked by hand rather than decoded into structs; each field has its
// own check and a broken field leaves the others checked.
//
// A rule file is at most MaxFileSize bytes, and checking it costs time
// linear in its size (n log n where a list is sorted): duplicates in lists,
// watch entries that overlap and permissions that merge are found with
// maps, not by comparing every pair, and did-you-mean hints count edit
// distances only up to their limit, so a megabyte name costs no more than
// reading it.
//
// Files are cut into documents at "---" lines before YAML parses them, so
// that a syntax error in one document does not hide the problems in the
// others; each document is parsed with the lines before it blanked, which
// keeps line numbers those of the file. yaml.v3 reports a syntax error at
// the line of the enclosing block and without a column. The line reported
// here is found instead as the first line from which on the document no
// longer parses (the longest parsing prefix is searched for, bounded to
// documents of a few thousand lines and to a few megabytes of parsing in
// all), which is the line of the mistake for the common cases: a tab in
// the indentation, a dedented key, an unclosed bracket or quote. The
// column is the tab's for a tab, else the start of the line.
//
// # Scripts
//
// A rule's script is inline (spec.script) or in a file next to the YAML
// (spec.scriptFile); either way Rule.Script holds the text after loading,
// and Rule.ScriptPos where its first character is. Rule.ScriptPosition
// turns the line and column a JavaScript engine reports into a position in
// the file the user edits; for inline scripts written as literal blocks
// (script: |) it is exact, because every line of such a block is indented
// by the same amount. This package does not compile scripts; the scripting
// package does (scripting.CompileRule), and keeps the program in the Rule
// (Rule.Compiled), so that each version of a rule is compiled once
// however many checks and components need it.
//
// # Use
//
// Parse, ParseFile and Load return fully defaulted rules or a
// diag.ErrorList, never both. LoadAll, for checkers such as `kreact
// validate`, returns both, and the rules with problems too, so that their
// scripts are checked in the same round. Resolve needs a cluster's
// discovery (restmapper provides the Resolver) and checks what needs the
// resources' identity and scope. All functions are safe for concurrent
// use; Rule and Resolved are not changed after they are returned, and
// callers must not change them either.
package rules
