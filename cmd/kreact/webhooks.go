package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/rules"
)

type webhooksFlags struct {
	files     []string
	admission admissionFlags
	res       resourceFlags
}

func webhooksCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f webhooksFlags
	fs := commandFlags("webhooks", stdout)
	fs.ListVarP(&f.files, "filename", "f", "rule file or directory (repeatable)")
	f.admission.Register(fs)
	f.res.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.files = append(f.files, fs.Args()...)
	if len(f.files) == 0 {
		return &usageError{Msg: "webhooks: no rule files: use -f FILE|DIR"}
	}
	opts, err := f.admission.Options("webhooks")
	if err != nil {
		return err
	}
	c, err := checkedRules(ctx, f.files, &f.res)
	if err != nil {
		return err
	}
	var rs []admission.Rule
	for _, res := range c.Resolved {
		// Compiled again: validate keeps no program, and it compiled.
		prog, err := rules.Compile(res.Rule)
		if err != nil {
			return &invalidError{err}
		}
		if h := admission.HandlersOf(prog); h.Any() {
			rs = append(rs, admission.Rule{Resolved: res, Handlers: h})
		}
	}
	if len(rs) == 0 {
		fmt.Fprintln(stderr, "kreact webhooks: no rule declares onValidate or onMutate: there is nothing to print")
		return nil
	}
	v, m := admission.Configurations(rs, opts)
	var out bytes.Buffer
	for _, obj := range []struct {
		hooks int
		obj   any
	}{{len(v.Webhooks), v}, {len(m.Webhooks), m}} {
		if obj.hooks == 0 {
			continue
		}
		data, err := yaml.Marshal(obj.obj)
		if err != nil {
			return err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	_, err = stdout.Write(out.Bytes())
	return err
}
