package discovery_test

import (
	"context"
	"fmt"
	"log/slog"

	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/restmapper"
)

// ExampleCache wires a Cache to a cluster, follows what appears and
// disappears, and resolves names through it.
func ExampleCache() {
	run := func(ctx context.Context, cfg *rest.Config) error {
		dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return err
		}
		cache := discovery.New(dc, discovery.Options{Metadata: mc, Logger: slog.Default()})
		if err := cache.Refresh(ctx); err != nil { // fail fast if the cluster is unreachable
			return err
		}
		cancel := cache.Subscribe(func(d discovery.Diff) {
			for _, r := range d.Added {
				fmt.Println("start watching", r.GVR)
			}
			for _, r := range d.Removed {
				fmt.Println("stop watching", r.GVR)
			}
		})
		defer cancel()

		mapper := restmapper.New(cache, restmapper.Options{})
		if r, err := mapper.Resolve("deploy"); err == nil {
			fmt.Println(mapper.Name(r), r.Namespaced)
		}
		return cache.Run(ctx) // until ctx ends
	}
	_ = run
}
