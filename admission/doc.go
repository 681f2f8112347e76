// Package admission serves the admission handlers of rule scripts
// (onValidate, onMutate; see package scripting) to the API server.
//
// A mutating handler returns a change as JSON data: a JSON merge patch
// (RFC 7386) or JSON patch operations (RFC 6902). An AdmissionReview
// response carries only a JSON patch, and the API server applies it to
// the object it sent, so Patch applies the change to that object and
// answers with the difference: the patch the API server gets never
// depends on how the handler spelled its change, and a change that cannot
// apply, or that touches what identifies the object, fails the call
// instead of reaching the API server.
package admission
