package admission

import (
	"context"
	"net/url"
	"time"

	"k8s.io/client-go/dynamic"
)

// CertificateOptions say where the webhook server's certificate comes
// from (kreact run's --admission-cert-file, --admission-key-file and
// --admission-ca-secret). The zero value generates a certificate with a
// CA of the process's own.
type CertificateOptions struct {
	// CertFile and KeyFile, if set, are PEM files, read at once and again
	// when they change (LoadCertificates).
	CertFile, KeyFile string
	// CASecret, if set and CertFile is not, is the Secret in the
	// configurations' namespace that keeps the CA the replicas share
	// (SharedCA), read or created with Client.
	CASecret string
	Client   dynamic.Interface
}

// CertificateSource returns ServerOptions.Certificates for a server that
// config describes: the files of opts, read now (an error if they are
// missing or do not match), or a certificate for config's Hosts that is
// generated only when the server first listens, issued by the CA of
// opts.CASecret or else by a CA of its own.
func CertificateSource(config Options, opts CertificateOptions) (func(context.Context) (*Certificates, error), error) {
	switch {
	case opts.CertFile != "":
		files, err := LoadCertificates(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, err
		}
		return func(context.Context) (*Certificates, error) { return files, nil }, nil
	case opts.CASecret != "":
		return func(ctx context.Context) (*Certificates, error) {
			ca, key, err := SharedCA(ctx, opts.Client, config.Namespace, opts.CASecret, time.Now())
			if err != nil {
				return nil, err
			}
			return IssueCertificates(ca, key, config.Hosts(), time.Now())
		}, nil
	}
	return func(context.Context) (*Certificates, error) {
		return GenerateCertificates(config.Hosts(), time.Now())
	}, nil
}

// Hosts returns the names a generated certificate must hold: the
// Service's DNS names, the host of URL, and loopback.
func (o Options) Hosts() []string {
	svc := o.Service + "." + o.Namespace
	hosts := []string{o.Service, svc, svc + ".svc", svc + ".svc.cluster.local", "localhost", "127.0.0.1", "::1"}
	if u, err := url.Parse(o.URL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	return hosts
}
