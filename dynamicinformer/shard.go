package dynamicinformer

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/shard"
)

// ShardMode says how a sharded informer gets only its shard's objects.
type ShardMode string

const (
	// ShardServer: the API server applied the shardSelector (it echoed it
	// in the list's shardInfo) and sends only this shard's objects.
	ShardServer ShardMode = "server"
	// ShardClient: the API server ignored the shardSelector (feature gate
	// ShardedListAndWatch off, or an older server); the informer receives
	// every object and drops the others' with the same hash.
	ShardClient ShardMode = "client"
	// ShardNone: this replica owns no range (not yet a member, or its
	// Lease is not renewed); the informer does not run.
	ShardNone ShardMode = "none"
)

// errReshard says the replica's range changed: the informer restarts.
var errReshard = errors.New("shard range changed")

// shardSpec is what one sharded informer instance selects.
type shardSpec struct {
	rng      shard.Range
	key      string // shard.KeyNamespace or shard.KeyUID
	selector string
	mode     ShardMode
}

func (e *entry) sharded() bool { return e.key.Sharded && e.m.opts.Shards != nil }

// shardSpec returns the spec of the range this replica owns now for res,
// and false if it owns none. mode is left for the preflight to decide.
func (e *entry) currentShard(res apiresource.Resource) (shardSpec, bool) {
	rng, ok := e.m.opts.Shards.Range()
	if !ok {
		return shardSpec{}, false
	}
	key := shard.KeyFor(res.Namespaced, e.m.opts.ShardByNamespace)
	return shardSpec{rng: rng, key: key, selector: shard.Selector(key, rng)}, true
}

// keep returns the client-side filter of spec, counting what it drops.
func (spec shardSpec) keep(filtered func()) func(runtime.Object) bool {
	matcher := shard.Matcher(spec.key, spec.rng)
	return func(obj runtime.Object) bool {
		ok, err := matcher.Matches(obj)
		if err != nil || !ok {
			filtered()
			return false
		}
		return true
	}
}

// shardInfoSelector returns the selector the server echoed in a list's
// metadata.shardInfo, or "" if it did not apply one.
func shardInfoSelector(list *unstructured.UnstructuredList) string {
	s, _, _ := unstructured.NestedString(list.Object, "metadata", "shardInfo", "selector")
	return s
}

// keepAs adapts keep to the object type of a ListWatch; nil stays nil.
func keepAs[O runtime.Object](keep func(runtime.Object) bool) func(O) bool {
	if keep == nil {
		return nil
	}
	return func(o O) bool { return keep(o) }
}
