package admission

import (
	"crypto/x509"
	"slices"
	"testing"
)

// Certificate files are read at once; a generated certificate names the
// Service and the host of the URL.
func TestCertificateSource(t *testing.T) {
	config := Options{Namespace: "kreact-system", Service: "kreact-admission", URL: "https://kreact.example:9443"}
	if _, err := CertificateSource(config, CertificateOptions{CertFile: "testdata/missing.pem", KeyFile: "testdata/missing-key.pem"}); err == nil {
		t.Error("missing certificate files: no error")
	}
	source, err := CertificateSource(config, CertificateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := source(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := certs.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(tc.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"kreact-admission.kreact-system.svc", "kreact.example", "localhost"} {
		if !slices.Contains(leaf.DNSNames, host) {
			t.Errorf("certificate names %q, not %s", leaf.DNSNames, host)
		}
	}
}
