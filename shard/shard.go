package shard

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// The fields an object is sharded by, as the API server's shardRange()
// names them.
const (
	// KeyNamespace shards namespaced resources: every object of a
	// namespace falls in the same shard.
	KeyNamespace = "object.metadata.namespace"
	// KeyUID shards cluster-scoped resources, whose namespace is empty.
	KeyUID = "object.metadata.uid"
)

// KeyFor returns the shard key of a resource: KeyNamespace for a
// namespaced resource when byNamespace is set, else KeyUID (cluster-scoped
// resources have no namespace to shard by).
func KeyFor(namespaced, byNamespace bool) string {
	if namespaced && byNamespace {
		return KeyNamespace
	}
	return KeyUID
}

// Hash is the 64-bit FNV-1a hash of value, the hash the API server's
// shardRange() compares (k8s.io/apimachinery/pkg/sharding.HashField).
func Hash(value string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(value))
	return h.Sum64()
}

// Range is a half-open range [Start, End) of the hash space. End == 0
// stands for 2^64, the end of the space; the zero Range is therefore the
// whole space.
type Range struct {
	Start, End uint64
}

// Contains reports whether h falls in r.
func (r Range) Contains(h uint64) bool {
	return h >= r.Start && (r.End == 0 || h < r.End)
}

// String formats r like the bounds of a shardRange() call.
func (r Range) String() string { return "[" + hex(r.Start) + ", " + r.endHex() + ")" }

func (r Range) endHex() string {
	if r.End == 0 {
		return "0x10000000000000000"
	}
	return hex(r.End)
}

// hex formats a bound as the API server requires: 0x and 16 digits.
func hex(v uint64) string { return fmt.Sprintf("0x%016x", v) }

// Assign returns the range of self among members: the hash space split
// into len(members) contiguous ranges of equal size (to within one),
// given out in the sorted order of the members' names. Every replica that
// sees the same set of members computes the same split, with no
// coordinator. Duplicate names count once. ok is false if self is not a
// member.
func Assign(members []string, self string) (r Range, ok bool) {
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	i, found := slices.BinarySearch(sorted, self)
	if !found {
		return Range{}, false
	}
	return split(uint64(i), uint64(len(sorted))), true
}

// split returns the i-th of n ranges: [⌊i·2^64/n⌋, ⌊(i+1)·2^64/n⌋).
func split(i, n uint64) Range {
	bound := func(k uint64) uint64 {
		if k == n {
			return 0 // 2^64
		}
		q, _ := bits.Div64(k, 0, n) // k·2^64 / n, k < n
		return q
	}
	return Range{Start: bound(i), End: bound(i + 1)}
}

// Selector returns the shardSelector string that selects the objects
// whose key hashes into one of ranges, as the API server parses it:
// "shardRange(object.metadata.namespace, '0x…', '0x…') || …". No ranges
// give "", which selects everything: callers that own nothing must not
// list at all.
func Selector(key string, ranges ...Range) string {
	return Matcher(key, ranges...).String()
}

// Matcher returns the selector of Selector as apimachinery's
// sharding.Selector, whose Matches is the very code the API server filters
// with: filtering on the client with it splits objects exactly as the
// server does.
func Matcher(key string, ranges ...Range) sharding.Selector {
	reqs := make([]sharding.ShardRangeRequirement, 0, len(ranges))
	for _, r := range ranges {
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: key, Start: hex(r.Start), End: r.endHex()})
	}
	return sharding.NewSelector(reqs...)
}

// Matches reports whether obj's key hashes into one of ranges. Objects
// without the metadata the key names do not match.
func Matches(key string, obj runtime.Object, ranges ...Range) bool {
	if len(ranges) == 0 {
		return false
	}
	ok, err := Matcher(key, ranges...).Matches(obj)
	return err == nil && ok
}
