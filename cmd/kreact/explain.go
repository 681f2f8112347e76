package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/explain"
)

// explainAddrEnv names the environment variable that gives kreact
// explain the address to ask when --address is not given.
const explainAddrEnv = "KREACT_EXPLAIN_ADDRESS"

// defaultExplainAddr is the address kreact explain asks by default; the
// manifests in deploy/ would pass the same to kreact run.
const defaultExplainAddr = "127.0.0.1:8083"

// explainCmd is `kreact explain RESOURCE NAME`: it asks a running kreact
// (kreact run --explain-address) what its rules know of an object.
func explainCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var namespace, output, addr, rule string
	fs := commandFlags("explain", stdout)
	fs.StringVarP(&namespace, "namespace", "n", "", "the object's namespace (default: default, for a namespaced resource)")
	fs.StringVarP(&output, "output", "o", "", "yaml or json (default: text)")
	fs.StringVarP(&addr, "address", "", "", "the --explain-address of the kreact run to ask (default: $"+explainAddrEnv+", else "+defaultExplainAddr+")")
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
	if addr == "" {
		addr = os.Getenv(explainAddrEnv)
	}
	if addr == "" {
		addr = defaultExplainAddr
	}
	resource, name := args[0], args[1]
	o, err := explain.Ask(ctx, addr, resource, namespace, name)
	switch {
	case errors.Is(err, explain.ErrUnknownResource):
		return &usageError{Msg: "explain: " + err.Error()}
	case err != nil:
		return fmt.Errorf("explain: %w", err)
	}
	if rule != "" {
		var loaded []string
		i := slices.IndexFunc(o.Rules, func(r explain.Rule) bool { loaded = append(loaded, r.Name); return r.Name == rule })
		if i < 0 {
			return fmt.Errorf("explain: rule %q is not loaded in the kreact at %s (loaded: %s)", rule, addr, strings.Join(loaded, ", "))
		}
		o.Rules = o.Rules[i : i+1]
	}
	switch output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	case "yaml":
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		_, err = stdout.Write(data)
		return err
	}
	o.WriteText(stdout)
	return nil
}
