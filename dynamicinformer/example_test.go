package dynamicinformer_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
)

// A rule that reacts to ConfigMaps labelled app=web in one namespace. The
// Watch may name a CRD that does not exist yet: it starts when it appears.
func ExampleManager_Watch() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Println(err)
		return
	}
	disc := discovery.New(cgdiscovery.NewDiscoveryClientForConfigOrDie(cfg),
		discovery.Options{Metadata: metadata.NewForConfigOrDie(cfg)})
	m := dynamicinformer.New(dynamic.NewForConfigOrDie(cfg), disc, dynamicinformer.Options{})

	w, err := m.Watch(dynamicinformer.Key{
		GVR:           schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace:     "default",
		LabelSelector: "app=web",
	}, "rules/web.js", cache.ResourceEventHandlerDetailedFuncs{
		// Handlers only enqueue; objects belong to the cache.
		AddFunc: func(obj any, initial bool) { fmt.Println("add", initial) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()

	go func() { _ = disc.Run(ctx) }()
	go func() { _ = m.Run(ctx) }()
	if cache.WaitForCacheSync(ctx.Done(), w.HasSynced) {
		fmt.Println("caught up:", w.State())
	}
	<-ctx.Done()
}
