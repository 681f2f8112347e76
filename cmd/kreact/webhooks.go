package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
)

func webhooksCmd(ctx context.Context, o *cmdline.WebhooksOptions, stdout, stderr io.Writer) error {
	_, rs, err := checkedRules(ctx, &o.InputFlags)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		fmt.Fprintln(stderr, "kreact webhooks: no rule declares onValidate or onMutate: there is nothing to print")
		return nil
	}
	out, err := admission.ConfigurationsYAML(rs, o.Config)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
