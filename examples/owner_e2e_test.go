//go:build e2e

package examples_test

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// TestBackupConfigMapIsCollectedWithItsBackup runs backup-configmaps, whose
// script creates the backup ConfigMap with {owner: backup}, on a control
// plane with kube-controller-manager: the ConfigMap carries the
// controller reference to its Backup, and Kubernetes' garbage collector
// deletes it once the Backup is deleted.
func TestBackupConfigMapIsCollectedWithItsBackup(t *testing.T) {
	gc, err := testcluster.Start(testcluster.Options{ControllerManager: true})
	if err != nil {
		t.Fatalf("start a control plane with kube-controller-manager: %v", err)
	}
	t.Cleanup(func() {
		if err := gc.Stop(); err != nil {
			t.Errorf("stop the control plane: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stack, err := clientstack.Start(ctx, gc.Config(), clientstack.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	client := stack.Client
	// The CRD first: the garbage collector watches Backups only once its
	// periodic discovery has found them.
	crd := readObject(t, "crds/backup.yaml")
	if _, err := client.Resource(testcluster.CRDGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the Backup CRD: %v", err)
	}
	rs, err := rules.Load("backup-configmaps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{Logger: logger})
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; _ = stack.Wait() }()
	if err := eng.Load(ctx, rs); err != nil {
		t.Fatal(err)
	}

	const ns = "owned"
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	configMaps := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": ns, "labels": map[string]any{"app": "web"}}, "data": map[string]any{"k": "v"}}}
	if _, err := configMaps.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	backups := client.Resource(schema.GroupVersionResource{Group: "demo.kreact.dev", Version: "v1alpha1", Resource: "backups"}).Namespace(ns)
	backup := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "demo.kreact.dev/v1alpha1", "kind": "Backup",
		"metadata": map[string]any{"name": "nightly", "namespace": ns}, "spec": map[string]any{"selector": "app=web"}}}
	// The CRD may still be on its way to being served.
	var created *unstructured.Unstructured
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		created, err = backups.Create(ctx, backup, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("create the Backup: %v", err)
	}

	var copyCM *unstructured.Unstructured
	testcluster.Eventually(t, "the backup ConfigMap", func() bool {
		copyCM, err = configMaps.Get(ctx, "backup-nightly", metav1.GetOptions{})
		return err == nil
	})
	refs, _, _ := unstructured.NestedSlice(copyCM.Object, "metadata", "ownerReferences")
	want := []any{map[string]any{
		"apiVersion": "demo.kreact.dev/v1alpha1", "kind": "Backup", "name": "nightly", "uid": string(created.GetUID()),
		"controller": true, "blockOwnerDeletion": true,
	}}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("ownerReferences = %v, want %v", refs, want)
	}

	if err := backups.Delete(ctx, "nightly", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the garbage collector to delete the backup ConfigMap", func() bool {
		_, err := configMaps.Get(ctx, "backup-nightly", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := configMaps.Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap that was backed up: %v, want it kept", err)
	}
}
