package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

// admissionServer builds the webhook server of the rules' admission
// handlers, or nil when --admission-bind-address is empty. A certificate
// file that is missing or does not match its key is invalid input. With
// --admission-ca-secret the CA comes from, or goes to, that Secret.
func admissionServer(f *admissionFlags, stack *kube.Stack, rec *metrics.Recorder, logger *slog.Logger) (*admission.Server, error) {
	if f.Addr == "" {
		return nil, nil
	}
	opts, err := f.Options("run")
	if err != nil {
		return nil, err
	}
	// Files are checked now; a certificate is generated only once a
	// rule with admission handlers is loaded.
	var certs func(context.Context) (*admission.Certificates, error)
	switch {
	case f.CertFile != "":
		files, err := admission.LoadCertificates(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, &invalidError{err}
		}
		certs = func(context.Context) (*admission.Certificates, error) { return files, nil }
	case f.CASecret != "":
		certs = func(ctx context.Context) (*admission.Certificates, error) {
			ca, key, err := admission.SharedCA(ctx, stack.Client, opts.Namespace, f.CASecret, time.Now())
			if err != nil {
				return nil, err
			}
			return admission.IssueCertificates(ca, key, f.Hosts(opts), time.Now())
		}
	default:
		certs = func(context.Context) (*admission.Certificates, error) {
			return admission.GenerateCertificates(f.Hosts(opts), time.Now())
		}
	}
	var applier admission.Applier
	if f.Apply {
		applier = admission.NewApplier(stack.Client)
	}
	return admission.NewServer(admission.ServerOptions{
		Addr:         f.Addr,
		Certificates: certs,
		Config:       opts,
		Applier:      applier,
		Mapper:       stack.Mapper,
		Informers:    stack.Informers,
		Observer:     rec,
		Logger:       logger,
	})
}

// checkAdmissionFiles checks the admission flags that name files: the
// certificate and its key (a missing file, a key that does not match, is
// invalid input) and the CA bundle.
func checkAdmissionFiles(f *admissionFlags) error {
	if f.Addr == "" {
		return nil
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return &usageError{Msg: "run: --admission-cert-file and --admission-key-file go together"}
	}
	if f.CertFile != "" {
		if _, err := admission.LoadCertificates(f.CertFile, f.KeyFile); err != nil {
			return &invalidError{err}
		}
	}
	_, err := f.Options("run")
	return err
}

// admissionRules loads rs into the server, then follows the rule files
// as the leader's engine does (every replica serves admission), until
// ctx ends.
func admissionRules(srv *admission.Server, rs []*rules.Rule, failed []string, opts engine.ReloadOptions, logger *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		report := func(err error) {
			if err != nil && ctx.Err() == nil {
				diag.Log(logger, "admission: rules not served, or their webhook configurations not applied", err)
			}
		}
		report(srv.Load(ctx, rs, failed...))
		if opts.Interval <= 0 {
			<-ctx.Done()
			return nil
		}
		opts.Reloaded = report
		engine.Reload(ctx, srv, opts)
		return nil
	}
}

// errAdmissionNotSynced is the readiness of a replica whose admission
// handlers cannot read their caches yet.
var errAdmissionNotSynced = errors.New("the caches that admission handlers read are not synced")
