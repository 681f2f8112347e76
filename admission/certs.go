package admission

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync"
	"time"
)

// Certificates is the webhook server's certificate: read from files
// (cert-manager's, or a mounted Secret) and read again when they change,
// or generated, with a CA of its own, when kreact starts.
type Certificates struct {
	certFile, keyFile string
	// ca is the PEM of the generated CA, or of the certificate file.
	ca []byte

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime time.Time
}

// LoadCertificates reads a certificate and its key from PEM files. A file
// that is missing or a key that does not match the certificate is an
// error, naming the files. The files are read again when the certificate
// file changes (a renewal), at the next TLS handshake; a renewal that
// does not load keeps the certificate before it.
func LoadCertificates(certFile, keyFile string) (*Certificates, error) {
	c := &Certificates{certFile: certFile, keyFile: keyFile}
	if err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Certificates) reload() error {
	info, err := os.Stat(c.certFile)
	if err != nil {
		return fmt.Errorf("admission certificate: %w", err)
	}
	if c.cert != nil && info.ModTime().Equal(c.modTime) {
		return nil
	}
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return fmt.Errorf("admission certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return fmt.Errorf("admission certificate key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("admission certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.modTime, c.ca = &cert, info.ModTime(), certPEM
	return nil
}

// GenerateCertificates makes a CA and a serving certificate it signs for
// hosts (DNS names and IP addresses), valid for a year from now. The API
// server trusts it through the configurations' caBundle (CABundle).
func GenerateCertificates(hosts []string, now time.Time) (*Certificates, error) {
	caPEM, caKeyPEM, err := NewCA(now)
	if err != nil {
		return nil, err
	}
	return IssueCertificates(caPEM, caKeyPEM, hosts, now)
}

// NewCA makes a CA, valid for ten years from now, and returns its
// certificate and key as PEM.
func NewCA(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kreact admission CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("admission CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// IssueCertificates makes a serving certificate for hosts (DNS names and
// IP addresses), valid for a year from now, signed by the CA of caPEM and
// caKeyPEM, whose certificate is then the CABundle.
func IssueCertificates(caPEM, caKeyPEM []byte, hosts []string, now time.Time) (*Certificates, error) {
	caPair, err := tls.X509KeyPair(caPEM, caKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("admission CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caPair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("admission CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kreact admission"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caPair.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("admission certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return nil, err
	}
	return &Certificates{cert: &cert, ca: bytes.Clone(caPEM)}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// GetCertificate is tls.Config.GetCertificate.
func (c *Certificates) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.certFile != "" {
		if err := c.reload(); err != nil && c.cert == nil {
			return nil, err
		}
	}
	return c.cert, nil
}

// CABundle returns the PEM the API server needs to trust the server: the
// generated CA, or the certificate file (right for a self-signed
// certificate; give the CA's file otherwise, --admission-ca-file).
func (c *Certificates) CABundle() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.ca)
}
