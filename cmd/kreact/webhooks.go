package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kreact/kreact/admission"
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
	rs, err := admission.RulesOf(c.Resolved)
	if err != nil {
		return &invalidError{err}
	}
	if len(rs) == 0 {
		fmt.Fprintln(stderr, "kreact webhooks: no rule declares onValidate or onMutate: there is nothing to print")
		return nil
	}
	out, err := admission.ConfigurationsYAML(rs, opts)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
