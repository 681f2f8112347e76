package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rbac"
	"github.com/kreact/kreact/validate"
)

func validateCmd(ctx context.Context, o *cmdline.ValidateOptions, stdout, stderr io.Writer) error {
	files, mapper, cfg, err := o.InputFlags.Load(ctx, userAgent())
	if err != nil {
		return err
	}
	// Loading, compiling and resolving may take long on big inputs; a
	// signal ends validate at once.
	type checked struct {
		*validate.Result
		err error
	}
	c, err := lifecycle.Interruptible(ctx, "validate", func() checked {
		r, err := validate.Check(ctx, files, mapper, validate.Options{Admission: o.Config})
		return checked{r, err}
	})
	if err = cmp.Or(err, c.err); err != nil {
		return err
	}
	if cfg != nil {
		// What makes a rule silent on this cluster: a namespace that
		// does not exist, a selector that matches nothing.
		if err := c.CheckCluster(ctx, cfg); err != nil {
			return &cmdline.ClusterError{Err: err}
		}
	}
	c.WriteProblems(stderr, cfg != nil)
	summary, ok := c.Summary()
	if !ok {
		return &cmdline.InvalidError{Err: errors.New(summary)}
	}
	fmt.Fprintln(stdout, summary)
	return nil
}

// checkedRules checks the rule files of r for rbac and webhooks, with
// opts, as validate.CheckValid does.
func checkedRules(ctx context.Context, r *cmdline.InputFlags, opts validate.Options) (*validate.Result, []admission.Rule, error) {
	ruleFiles, mapper, _, err := r.Load(ctx, userAgent())
	if err != nil {
		return nil, nil, err
	}
	return validate.CheckValid(ctx, ruleFiles, mapper, opts)
}

func rbacCmd(ctx context.Context, o *cmdline.RBACOptions, stdout, stderr io.Writer) error {
	c, admitting := &validate.Result{}, []admission.Rule(nil)
	if len(o.Files) > 0 {
		var err error
		if c, admitting, err = checkedRules(ctx, &o.InputFlags, validate.Options{}); err != nil {
			return err
		}
	}
	var names []string
	for _, r := range admitting {
		names = append(names, r.Resolved.Rule.Name)
	}
	return rbac.Write(stdout, stderr, c.Rules, c.Resolved, rbac.Options{Name: o.Name, Namespace: o.Namespace, LeaderElect: o.LeaderElect, Shards: o.Shards,
		OmitNamespace: !o.CreateNamespace, Admission: names, AdmissionCASecret: o.CASecret, RuleObjects: o.RuleObjects})
}

func webhooksCmd(ctx context.Context, o *cmdline.WebhooksOptions, stdout, stderr io.Writer) error {
	_, rs, err := checkedRules(ctx, &o.InputFlags, validate.Options{Admission: o.Config})
	if err != nil {
		return err
	}
	return admission.WriteConfigurations(stdout, stderr, rs, o.Config, o.ValidateRules)
}
