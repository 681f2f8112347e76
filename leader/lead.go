package leader

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/lifecycle"
)

// Lead returns what runs inner only while this replica leads, telling
// onLeading whether it does (Options.OnLeading): with opts nil, when
// there is no election, inner itself, leading from the start; else an
// Elector of opts that campaigns with a Lease client of cfg (NewClient).
func Lead(cfg *rest.Config, opts *Options, onLeading func(bool), inner lifecycle.Runnable) (lifecycle.Runnable, error) {
	if opts == nil {
		return lifecycle.Func(func(ctx context.Context) error {
			onLeading(true)
			return inner.Start(ctx)
		}), nil
	}
	client, err := NewClient(cfg, opts.RenewDeadline)
	if err != nil {
		return nil, err
	}
	o := *opts
	o.OnLeading = onLeading
	el, err := New(client, o)
	if err != nil {
		return nil, err
	}
	return lifecycle.Func(func(ctx context.Context) error { return el.Run(ctx, inner.Start) }), nil
}
