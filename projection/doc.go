// Package projection says which parts of an object a rule reads, and cuts
// objects down to them before they enter a cache.
//
// A rule lists the paths its script reads under spec.watch[].fields
// ("spec.replicas", "status.conditions"). A Fields value is that set of
// paths, in canonical form. Apply keeps those paths, and always the
// object's identity (Identity: apiVersion, kind and the metadata that
// names, labels, owns and finalizes it), and drops the rest, so that the
// rest never costs memory.
//
// # Guarantees
//
//   - The zero Fields keeps whole objects: a rule without a projection.
//   - Fields values are canonical: New sorts its paths and drops a path
//     that another one already keeps, so equal sets have equal String
//     forms and compare equal with Equal.
//   - Union keeps what either keeps; an informer shared by rules applies
//     the Union of their Fields, so each rule sees at least its paths.
//   - Apply never changes its argument's maps. It returns a new top-level
//     map (and new maps on the way to the kept paths) that shares the kept
//     values with the argument: the caller gives up the argument, as an
//     informer's transform does.
//   - What Apply keeps is one tree, Kept (a Node per map), which code that
//     cuts objects held in another form follows too, so that both keep
//     the same.
//   - Lists are kept or dropped whole: a path cannot index into a list.
//
// The package is pure: no I/O, no other kreact package.
package projection
