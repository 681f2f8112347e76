package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/explain"
)

func explainCmd(ctx context.Context, o *cmdline.ExplainOptions, stdout, _ io.Writer) error {
	ref, err := o.Resolve(ctx, userAgent())
	if err != nil {
		return err
	}
	addr := explain.Address(o.Address, os.Getenv)
	obj, err := explain.Ask(ctx, addr, ref, o.Namespace, o.Name)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return &cmdline.UsageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return fmt.Errorf("explain: %w", err)
	}
	if o.Rule != "" && !obj.Only(o.Rule) {
		return fmt.Errorf("explain: rule %q is not loaded in the kreact at %s (loaded: %s)", o.Rule, addr, strings.Join(obj.RuleNames(), ", "))
	}
	if err := obj.Write(stdout, o.Output); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	return nil
}
