package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/rbac"
)

type rbacFlags struct {
	files        []string
	name         string
	namespace    string
	leaderElect  bool
	shards       bool
	namespaceObj bool
	caSecret     string
	res          resourceFlags
}

func rbacCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f rbacFlags
	fs := commandFlags("rbac", stdout)
	fs.ListVarP(&f.files, "filename", "f", "rule file or directory (repeatable)")
	fs.StringVarP(&f.name, "name", "", "kreact", "name of the ServiceAccount, roles and bindings")
	fs.StringVarP(&f.namespace, "namespace", "n", "kreact-system", "namespace of the ServiceAccount (and of the Lease with --leader-elect)")
	fs.BoolVarP(&f.leaderElect, "leader-elect", "", false, "also grant what leader election needs on its Lease in --namespace")
	fs.BoolVarP(&f.namespaceObj, "create-namespace", "", true, "print the Namespace --namespace first, so that kubectl apply creates it; false when something else creates it")
	fs.BoolVarP(&f.shards, "shards", "", false, "also grant what sharding (kreact run --shards) needs on the replicas' Leases in --namespace")
	fs.StringVarP(&f.caSecret, "admission-ca-secret", "", "",
		"with rules that have admission handlers: also grant get and create on this Secret's resource in --namespace, for kreact run --admission-ca-secret")
	f.res.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.files = append(f.files, fs.Args()...)
	if f.leaderElect && f.shards {
		return &usageError{Msg: "rbac: --shards and --leader-elect exclude each other, as they do for kreact run"}
	}
	if len(f.files) == 0 {
		return &usageError{Msg: "rbac: no rule files: use -f FILE|DIR"}
	}
	for flag, v := range map[string]string{"--name": f.name, "--namespace": f.namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return &usageError{Msg: fmt.Sprintf("rbac: %s %q: %s", flag, v, strings.Join(errs, "; "))}
		}
	}
	c, err := checkedRules(ctx, f.files, &f.res)
	if err != nil {
		return err
	}
	for _, res := range c.Resolved {
		for _, w := range rbac.WideActions(res) {
			fmt.Fprintln(stderr, w)
		}
	}
	admitting, err := admission.RulesOf(c.Resolved)
	if err != nil {
		return &invalidError{err}
	}
	var names []string
	for _, r := range admitting {
		names = append(names, r.Resolved.Rule.Name)
	}
	out, err := rbac.Generate(c.Rules, c.Resolved, rbac.Options{Name: f.name, Namespace: f.namespace, LeaderElect: f.leaderElect, Shards: f.shards, OmitNamespace: !f.namespaceObj,
		Admission: names, AdmissionCASecret: f.caSecret})
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
