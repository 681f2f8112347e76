package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/rbac"
)

func rbacCmd(ctx context.Context, o *cmdline.RBACOptions, stdout, stderr io.Writer) error {
	c, admitting, err := checkedRules(ctx, &o.InputFlags)
	if err != nil {
		return err
	}
	for _, w := range rbac.WideActions(c.Resolved...) {
		fmt.Fprintln(stderr, w)
	}
	var names []string
	for _, r := range admitting {
		names = append(names, r.Resolved.Rule.Name)
	}
	out, err := rbac.Generate(c.Rules, c.Resolved, rbac.Options{Name: o.Name, Namespace: o.Namespace, LeaderElect: o.LeaderElect, Shards: o.Shards,
		OmitNamespace: !o.CreateNamespace, Admission: names, AdmissionCASecret: o.CASecret})
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
