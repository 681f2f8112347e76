package admission

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writePair(t *testing.T, dir, name string, certPEM, keyPEM []byte) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestLoadCertificates(t *testing.T) {
	dir := t.TempDir()
	caA, keyA, err := NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	caB, keyB, err := NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	goodCert, goodKey := writePair(t, dir, "good", caA, keyA)
	badCert, badKey := writePair(t, dir, "bad", caA, keyB)

	c, err := LoadCertificates(goodCert, goodKey)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.CABundle()) != string(caA) {
		t.Error("the CA bundle of a certificate file is not the file")
	}
	for _, tt := range []struct {
		name, cert, key, want string
	}{
		{"missing certificate", filepath.Join(dir, "nosuch.crt"), goodKey, "admission certificate: stat " + filepath.Join(dir, "nosuch.crt") + ": no such file or directory"},
		{"missing key", goodCert, filepath.Join(dir, "nosuch.key"), "admission certificate key: open " + filepath.Join(dir, "nosuch.key") + ": no such file or directory"},
		{"key of another certificate", badCert, badKey, "admission certificate " + badCert + " and key " + badKey + ": tls: private key does not match public key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := LoadCertificates(tt.cert, tt.key); err == nil || err.Error() != tt.want {
				t.Errorf("LoadCertificates = %v, want %s", err, tt.want)
			}
		})
	}

	// A renewal is served from the next handshake; a broken one keeps
	// the certificate before it.
	writePair(t, dir, "good", caB, keyB)
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(goodCert, later, later); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || string(c.CABundle()) != string(caB) || got == nil {
		t.Errorf("after a renewal: %v, bundle of the new file %v", err, string(c.CABundle()) == string(caB))
	}
	if err := os.WriteFile(goodKey, keyA, 0o600); err != nil {
		t.Fatal(err)
	}
	later = later.Add(time.Minute)
	if err := os.Chtimes(goodCert, later, later); err != nil {
		t.Fatal(err)
	}
	if got2, err := c.GetCertificate(&tls.ClientHelloInfo{}); err != nil || got2 != got {
		t.Errorf("a renewal that does not load: %v, certificate kept %v", err, got2 == got)
	}
}

func TestGenerateCertificatesAreTrustedByTheirBundle(t *testing.T) {
	c, err := GenerateCertificates([]string{"kreact-admission.kreact-system.svc", "127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckCABundle(c.CABundle()); err != nil {
		t.Fatal(err)
	}
	cert, err := c.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	if leaf == nil || !strings.Contains(strings.Join(leaf.DNSNames, ","), "kreact-admission.kreact-system.svc") || len(leaf.IPAddresses) != 1 {
		t.Fatalf("leaf %+v", leaf)
	}
	pool := x509Pool(t, c.CABundle())
	if _, err := leaf.Verify(x509VerifyOptions(pool, "kreact-admission.kreact-system.svc")); err != nil {
		t.Errorf("the certificate is not trusted by its bundle: %v", err)
	}
}

func x509Pool(t *testing.T, pem []byte) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in the bundle")
	}
	return p
}

func x509VerifyOptions(roots *x509.CertPool, name string) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: roots, DNSName: name}
}
