// Package tail is `kreact watch`: it watches resources named as kubectl
// names them through the informer manager and prints one record per add,
// update and delete (a line, a wide line, JSON or YAML), in the order each
// informer delivers them. Records of different resources are written
// whole, one at a time. A resource that is not served yet is waited for
// and watched once discovery serves it; a deleted CRD's watch resumes
// when it comes back (the informer manager's guarantee). Start returns
// only once every watch it holds has stopped.
package tail
