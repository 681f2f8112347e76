package shard

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

func TestHashMatchesAPIMachinery(t *testing.T) {
	for _, v := range []string{"", "default", "kube-system", "ns-17", "6f1c3a52-0c8e-4f3b-9b7e-1d2a3c4b5e6f"} {
		if got, want := fmt.Sprintf("%016x", Hash(v)), sharding.HashField(v); got != want {
			t.Errorf("Hash(%q) = %s, sharding.HashField = %s", v, got, want)
		}
	}
}

func TestAssign(t *testing.T) {
	const half = uint64(1) << 63
	tests := []struct {
		name    string
		members []string
		self    string
		want    Range
		ok      bool
	}{
		{"alone owns everything", []string{"a"}, "a", Range{0, 0}, true},
		{"first of two", []string{"b", "a"}, "a", Range{0, half}, true},
		{"second of two", []string{"b", "a"}, "b", Range{half, 0}, true},
		{"duplicates count once", []string{"b", "a", "b"}, "b", Range{half, 0}, true},
		{"first of three", []string{"c", "b", "a"}, "a", Range{0, 0x5555555555555555}, true},
		{"middle of three", []string{"c", "b", "a"}, "b", Range{0x5555555555555555, 0xaaaaaaaaaaaaaaaa}, true},
		{"last of three", []string{"c", "b", "a"}, "c", Range{0xaaaaaaaaaaaaaaaa, 0}, true},
		{"not a member", []string{"a", "b"}, "z", Range{}, false},
		{"no members", nil, "a", Range{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Assign(tc.members, tc.self)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Assign(%v, %q) = %v, %v; want %v, %v", tc.members, tc.self, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestAssignPartitions checks that for any number of members the ranges
// tile the hash space: contiguous, no gap, no overlap, ending at 2^64.
func TestAssignPartitions(t *testing.T) {
	for n := 1; n <= 13; n++ {
		members := make([]string, n)
		for i := range members {
			members[i] = "replica-" + strconv.Itoa(i)
		}
		var next uint64
		for i, m := range slices.Sorted(slices.Values(members)) {
			r, ok := Assign(members, m)
			if !ok {
				t.Fatalf("n=%d: %s not assigned", n, m)
			}
			if r.Start != next {
				t.Fatalf("n=%d: range %d starts at %x, want %x", n, i, r.Start, next)
			}
			if i == n-1 && r.End != 0 {
				t.Fatalf("n=%d: last range ends at %x, want 2^64", n, r.End)
			}
			if i < n-1 && r.End <= r.Start {
				t.Fatalf("n=%d: range %d is empty or inverted: %v", n, i, r)
			}
			next = r.End
		}
	}
}

func TestSelector(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		ranges []Range
		want   string
	}{
		{"whole space", KeyNamespace, []Range{{}},
			"shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')"},
		{"lower half by uid", KeyUID, []Range{{0, 1 << 63}},
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{"two ranges", KeyNamespace, []Range{{0, 1 << 62}, {3 << 62, 0}},
			"shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || " +
				"shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')"},
		{"nothing", KeyNamespace, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Selector(tc.key, tc.ranges...); got != tc.want {
				t.Errorf("Selector = %q\nwant       %q", got, tc.want)
			}
		})
	}
}

// TestMatchesSplitsLikeAssign checks that client-side filtering with the
// ranges of three replicas puts every object in exactly one of them.
func TestMatchesSplitsLikeAssign(t *testing.T) {
	members := []string{"kreact-a", "kreact-b", "kreact-c"}
	counts := map[string]int{}
	for i := range 300 {
		obj := &unstructured.Unstructured{}
		obj.SetNamespace(fmt.Sprintf("ns-%d", i%30))
		obj.SetName(fmt.Sprintf("cm-%d", i))
		// UIDs are random (version 4 UUIDs); a digest stands in for one.
		sum := sha256.Sum256([]byte(strconv.Itoa(i)))
		obj.SetUID(types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])))
		for _, key := range []string{KeyNamespace, KeyUID} {
			owners := 0
			for _, m := range members {
				r, _ := Assign(members, m)
				if Matches(key, obj, r) {
					owners++
					counts[key+m]++
					value := obj.GetNamespace()
					if key == KeyUID {
						value = string(obj.GetUID())
					}
					if !r.Contains(Hash(value)) {
						t.Errorf("%s matched by %v but its hash %x is outside", obj.GetName(), r, Hash(value))
					}
				}
			}
			if owners != 1 {
				t.Errorf("%s by %s: %d owners, want 1", obj.GetName(), key, owners)
			}
		}
	}
	for _, m := range members {
		if counts[KeyUID+m] == 0 {
			t.Errorf("%s owns no object by uid", m)
		}
	}
	if Matches(KeyNamespace, &unstructured.Unstructured{}) {
		t.Error("no ranges matched an object")
	}
}

func TestKeyFor(t *testing.T) {
	tests := []struct {
		namespaced, byNamespace bool
		want                    string
	}{
		{true, true, KeyNamespace},
		{true, false, KeyUID},
		{false, true, KeyUID},
		{false, false, KeyUID},
	}
	for _, tc := range tests {
		if got := KeyFor(tc.namespaced, tc.byNamespace); got != tc.want {
			t.Errorf("KeyFor(%v, %v) = %q, want %q", tc.namespaced, tc.byNamespace, got, tc.want)
		}
	}
}

// TestNamespaceNamesCluster documents why UIDs are the default shard key:
// FNV-1a spreads a change in the last characters of a string over its low
// bits only, so namespaces that differ by a numeric suffix fall into few
// of the contiguous ranges.
func TestNamespaceNamesCluster(t *testing.T) {
	members := []string{"a", "b", "c"}
	owners := map[string]bool{}
	for i := range 30 {
		h := Hash(fmt.Sprintf("ns-%d", i))
		for _, m := range members {
			if r, _ := Assign(members, m); r.Contains(h) {
				owners[m] = true
			}
		}
	}
	if len(owners) == len(members) {
		t.Errorf("ns-0..ns-29 spread over all %d replicas; docs/operations.md's warning about namespace keys is out of date", len(members))
	}
}
