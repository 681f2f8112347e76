// Package shard splits kreact's work between replicas that are all
// active (kreact run --shards): which objects a replica handles, and who
// the replicas are.
//
// # The split
//
// Objects are assigned by the 64-bit FNV-1a hash of a shard key, the hash
// of KEP-5866 (the API server's ShardedListAndWatch, alpha in Kubernetes
// 1.36). The hash space is cut into as many contiguous ranges as there
// are live replicas, given out in the sorted order of their names (Assign):
// every replica that sees the same members computes the same split, so
// no coordinator is needed.
//
// A replica lists and watches with the shardSelector of its range
// (Selector) when the API server confirms it applied it (ListMeta.shardInfo
// is set on the answer); otherwise it receives everything and filters on
// its side with Matcher, which is apimachinery's sharding.Selector, the
// code the server filters with. Both modes split the same way.
//
// # The shard key
//
//   - By default every object is sharded by UID (KeyUID). UIDs are random,
//     so the split is even whatever the names. A rule's reads are then
//     answered by caches that are not sharded (below), never by the
//     sharded cache of its watch.
//   - With the namespace key (kreact run --shard-key namespace), namespaced
//     resources are sharded by namespace (KeyNamespace): every object of a
//     namespace is handled by one replica, and a rule's reads of the
//     resource it watches, in the namespace of the object it handles, are
//     answered by the sharded cache, which holds that whole namespace. The
//     split is even in namespaces, not objects, and FNV-1a spreads names
//     that differ only by a short suffix (ns-1, ns-2, ...) over few ranges:
//     the names decide the balance.
//   - Cluster-scoped resources are always sharded by UID: their namespace
//     is empty and would put them all on one replica.
//   - spec.reads are never sharded: each replica caches every object of
//     the resources a rule reads, so reads across namespaces and of
//     cluster-scoped resources are complete. A rule that reads the resource
//     it watches (with the UID key, or in other namespaces than its
//     object's with the namespace key) names it in spec.reads.
//   - onTick and cron schedules are not about objects: by default they run
//     once for the cluster, on the replica whose range holds the start of
//     the hash space (Membership.OwnsSchedules); a rule with
//     spec.tickScope replica ticks on every replica.
//
// # Membership
//
// Each replica holds a Lease of its own (Membership) and renews it; the
// live members are the Leases of the group that have not expired. Join
// builds a replica's Membership from a client config, naming the replica
// (NewIdentity) and its Leases' namespace when the flags do not.
//
// A replica owns its range as soon as it has listed the members it sees,
// so while replicas join one after the other, the objects that exist are
// first handled by the early ones (the first alone owns the whole hash
// space) and then handed over: a replica that gains a range receives its
// objects as initial adds, while the objects it keeps are not replayed
// (package dynamicinformer hands each handler over from the informer of
// the old range to that of the new one). Replicas that see different members for a
// moment may both own an object, for about one RenewPeriod. A replica
// that dies without deleting its Lease leaves its range unhandled until
// the Lease expires (LeaseDuration); the others then receive its objects
// as initial adds.
package shard
