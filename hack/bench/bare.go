package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	_ "net/http/pprof"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// runBare is the baseline: the controller a Go programmer would write for
// the mirror rule, with nothing kreact adds. It prints "patches N" when
// SIGTERM stops it.
func runBare(kubeconfig, namespace, pprofAddr string, workers int, qps float64, burst int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	cfg.UserAgent = "bench-bare"
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if pprofAddr != "" {
		// The default mux has net/http/pprof's handlers, as kreact's
		// --pprof serves them.
		go func() { _ = http.ListenAndServe(pprofAddr, nil) }()
	}

	informer := cgdynamicinformer.NewFilteredDynamicInformer(client, configMaps, namespace, 0, cache.Indexers{}, nil)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	go informer.Informer().Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		return fmt.Errorf("cache did not sync")
	}
	fmt.Println("synced")

	var patches atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				err := reconcile(ctx, client, informer.Lister(), key, &patches)
				if err != nil && ctx.Err() == nil {
					queue.AddRateLimited(key)
				} else {
					queue.Forget(key)
				}
				queue.Done(key)
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	fmt.Printf("patches %d\n", patches.Load())
	return nil
}

// reconcile mirrors one ConfigMap, read from the informer's cache.
func reconcile(ctx context.Context, client dynamic.Interface, lister cache.GenericLister, key string, patches *atomic.Int64) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := lister.ByNamespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	patch := mirrorPatch(obj.(*unstructured.Unstructured))
	if patch == nil {
		return nil
	}
	patches.Add(1)
	_, err = client.Resource(configMaps).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// mirrorPatch returns the merge patch that mirrors data.seq into the
// annotation, or nil when they agree.
func mirrorPatch(obj *unstructured.Unstructured) []byte {
	seq, ok, _ := unstructured.NestedString(obj.Object, "data", "seq")
	if !ok || obj.GetAnnotations()[annotation] == seq {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: seq}}})
	return patch
}
