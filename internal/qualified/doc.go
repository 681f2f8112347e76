// Package qualified makes names that fit the name part of a Kubernetes
// qualified name (at most 63 characters), the part after "kreact.dev/"
// of kreact's finalizers and once markers.
//
// It guarantees that a name that fits is kept as it is, so that the
// finalizers and markers of rules with short names (every rule file's,
// whose names are DNS labels) never change, and that a longer one (a
// team's Rule, NAMESPACE.NAME) becomes a name that fits and is still
// distinct: a prefix of it and a hash of the whole.
package qualified
