//go:build e2e

package testcluster_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// lowerHalf selects the objects whose namespace hashes below 2^63.
const lowerHalf = "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"

// TestShardedListFeatureGate starts a second control plane with
// ShardedListAndWatch on: a list with a shardSelector is filtered there and
// echoes the selector in shardInfo; the package's cluster (gate off, the
// default in 1.36) ignores the selector and echoes nothing.
func TestShardedListFeatureGate(t *testing.T) {
	gated, err := testcluster.Start(testcluster.Options{FeatureGates: map[string]bool{"ShardedListAndWatch": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gated.Stop() })

	for _, tc := range []struct {
		name     string
		cluster  *testcluster.Cluster
		filtered bool
	}{
		{"gate on", gated, true},
		{"gate off", cluster, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			cs := kubernetes.NewForConfigOrDie(tc.cluster.Config())
			const n = 16
			inLower := 0
			for i := range n {
				ns := fmt.Sprintf("gates-%d", i)
				if sharding.HashField(ns) < "8" {
					inLower++
				}
				if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns, Labels: map[string]string{"test": "gates"}}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if inLower == 0 || inLower == n {
				t.Fatalf("test namespaces all on one side of the split (%d of %d below)", inLower, n)
			}
			list, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "test=gates", ShardSelector: lowerHalf})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.filtered {
				if list.ShardInfo != nil {
					t.Errorf("shardInfo = %+v with the gate off, want none", list.ShardInfo)
				}
				if len(list.Items) != n {
					t.Errorf("%d items with the gate off, want all %d", len(list.Items), n)
				}
				return
			}
			if list.ShardInfo == nil || list.ShardInfo.Selector != lowerHalf {
				t.Errorf("shardInfo = %+v, want the selector echoed", list.ShardInfo)
			}
			if len(list.Items) != inLower {
				t.Errorf("%d items with the gate on, want the %d in the lower half", len(list.Items), inLower)
			}
			for _, cm := range list.Items {
				if h := sharding.HashField(cm.Namespace); h >= "8" {
					t.Errorf("%s/%s (hash %s) is outside the selected range", cm.Namespace, cm.Name, h)
				}
			}
		})
	}
}
