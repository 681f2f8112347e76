package main

import (
	"context"
	"fmt"
)

// interruptible returns f's result, or an error as soon as ctx ends (on
// SIGINT or SIGTERM). Loading rules cannot stop inside a file (a YAML
// document being decoded, a script being compiled), and a signal must not
// wait for it: f is then left to finish in the background and its result
// is dropped; the process is about to exit.
func interruptible[T any](ctx context.Context, what string, f func() T) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: interrupted: %w", what, context.Cause(ctx))
	}
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: interrupted: %w", what, context.Cause(ctx))
	}
}
