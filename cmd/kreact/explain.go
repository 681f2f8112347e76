package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kreact/kreact/explain"
)

// explainCmd is `kreact explain RESOURCE NAME`: it asks a running kreact
// (kreact run --explain-address) what its rules know of an object.
func explainCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var namespace, output, addr, rule string
	fs := commandFlags("explain", stdout)
	fs.StringVarP(&namespace, "namespace", "n", "", "the object's namespace (default: default, for a namespaced resource)")
	fs.StringVarP(&output, "output", "o", "", "yaml or json (default: text)")
	fs.StringVarP(&addr, "address", "", "", "the --explain-address of the kreact run to ask (default: $"+explain.AddressEnv+", else "+explain.DefaultAddress+")")
	fs.StringVarP(&rule, "rule", "", "", "answer for this rule only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	args = fs.Args()
	// kubectl's TYPE/NAME form is accepted too.
	if len(args) == 1 {
		if r, n, ok := strings.Cut(args[0], "/"); ok {
			args = []string{r, n}
		}
	}
	switch {
	case len(args) < 2:
		return &usageError{Msg: "explain: name the resource and the object, e.g. `kreact explain deploy web -n shop`"}
	case len(args) > 2:
		return &usageError{Msg: fmt.Sprintf("explain: unexpected argument %q", args[2])}
	case output != "" && output != "yaml" && output != "json":
		return &usageError{Msg: fmt.Sprintf("explain: -o %s: want yaml or json", output)}
	}
	addr = explain.Address(addr, os.Getenv)
	resource, name := args[0], args[1]
	o, err := explain.Ask(ctx, addr, resource, namespace, name)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return &usageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return fmt.Errorf("explain: %w", err)
	}
	if rule != "" && !o.Only(rule) {
		return fmt.Errorf("explain: rule %q is not loaded in the kreact at %s (loaded: %s)", rule, addr, strings.Join(o.RuleNames(), ", "))
	}
	if err := o.Write(stdout, output); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	return nil
}
