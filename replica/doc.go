// Package replica is what one kreact run process is among the replicas
// of a deployment: its name and whether it leads, which its scripts read
// (kreact.replica(), scripting.Replica), and, sharded (kreact run
// --shards), its membership in the group of replicas (package shard)
// with what the membership adds to the process: a layer under every
// other component, the informers' share of the objects, and who makes
// the ticks that are once per cluster.
//
// The name is this replica's leader-election identity (package leader),
// else its shard identity, else the host name; the isolated rules'
// process (package isolation) takes the name of the replica it is part
// of. A replica leads when it holds the leader Lease (SetLeading, told by
// leader.Lead), or sharded when it makes the once-per-cluster ticks
// (shard.Membership.OwnsSchedules); a replica that runs alone leads.
package replica
