//go:build e2e

package dynamicinformer

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/internal/testcluster"
)

// blindLimit bounds how long an informer may stay behind once the API
// server is back. client-go's reflector alone, after a few restarts, waits
// 30 to 60 s before it lists again; kreact's informers reconnect within a
// second. The limit is generous for a shared, noisy machine; it checks the
// contract (no backoff of tens of seconds), not speed.
const blindLimit = 20 * time.Second

// TestE2EAPIServerOutagesLoseNothing restarts the API server five times
// while ConfigMaps are updated, deleted and created, and checks that the
// handler ends up with the server's state (every final value, every
// delete) soon after the last restart.
func TestE2EAPIServerOutagesLoseNothing(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	ns := createNamespace(t, s.admin, "outage")
	const objects = 40
	for i := range objects {
		mustCreateCM(t, s.admin, ns, fmt.Sprintf("cm-%d", i), nil)
	}

	seen := &lastState{values: map[string]string{}}
	w, err := s.m.Watch(Key{GVR: cmGVR, Namespace: ns}, "outage-rule", seen)
	if err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "sync", w.HasSynced)

	ctx, stopWriting := context.WithCancel(t.Context())
	var writer sync.WaitGroup
	writer.Go(func() { writeUntilStopped(ctx, t, s, ns, objects) })

	for range 5 {
		time.Sleep(time.Second)
		if err := cluster.StopAPIServer(); err != nil {
			t.Fatalf("stop API server: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		if err := cluster.StartAPIServer(); err != nil {
			t.Fatalf("start API server: %v", err)
		}
	}
	time.Sleep(time.Second)
	stopWriting()
	writer.Wait()
	back := time.Now()

	list, err := s.admin.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[cm.GetName()], _, _ = unstructured.NestedString(cm.Object, "data", "k")
	}
	testcluster.Eventually(t, "the handler to see the server's final state", func() bool {
		return maps.Equal(seen.snapshot(), want)
	})
	if took := time.Since(back); took > blindLimit {
		t.Errorf("the handler caught up %v after the API server was back, want within %v", took, blindLimit)
	}
	t.Logf("caught up %v after the last restart; %d objects, %d deleted during the test", time.Since(back).Round(time.Millisecond), len(want), seen.deletes())
}

// writeUntilStopped updates every ConfigMap in rounds, deleting one and
// creating one each round, retrying each write until it succeeds, until
// ctx ends.
func writeUntilStopped(ctx context.Context, t *testing.T, s *e2e, ns string, objects int) {
	ri := s.admin.Resource(cmGVR).Namespace(ns)
	retry := func(write func() error) {
		for ctx.Err() == nil {
			err := write()
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for round := 1; ctx.Err() == nil; round++ {
		for i := range objects {
			name := fmt.Sprintf("cm-%d", i)
			retry(func() error {
				cm, err := ri.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				_ = unstructured.SetNestedField(cm.Object, fmt.Sprint(round), "data", "k")
				_, err = ri.Update(ctx, cm, metav1.UpdateOptions{})
				return err
			})
		}
		victim := fmt.Sprintf("extra-%d", round-1)
		retry(func() error { return ri.Delete(ctx, victim, metav1.DeleteOptions{}) })
		extra := fmt.Sprintf("extra-%d", round)
		retry(func() error { _, err := createCM(ctx, s.admin, ns, extra, nil); return err })
	}
}

// lastState is a handler that keeps the last data.k it saw of each
// object, and forgets deleted ones.
type lastState struct {
	mu      sync.Mutex
	values  map[string]string
	deleted int
}

func (l *lastState) OnAdd(obj any, _ bool) { l.set(obj) }
func (l *lastState) OnUpdate(_, obj any)   { l.set(obj) }
func (l *lastState) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u := obj.(*unstructured.Unstructured)
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.values, u.GetName())
	l.deleted++
}

func (l *lastState) set(obj any) {
	u := obj.(*unstructured.Unstructured)
	v, _, _ := unstructured.NestedString(u.Object, "data", "k")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.values[u.GetName()] = v
}

func (l *lastState) snapshot() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.values)
}

func (l *lastState) deletes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deleted
}
