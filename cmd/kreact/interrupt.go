package main

import (
	"context"

	"github.com/kreact/kreact/lifecycle"
)

// interruptible is lifecycle.Interruptible: loading rules stops waiting on
// SIGINT or SIGTERM.
func interruptible[T any](ctx context.Context, what string, f func() T) (T, error) {
	return lifecycle.Interruptible(ctx, what, f)
}
