package main

import (
	"crypto/x509"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// TestRootsWithoutSystemRoots runs itself again with no system roots, as in
// the scratch image: a certificate chaining to a Mozilla root must verify.
func TestRootsWithoutSystemRoots(t *testing.T) {
	if os.Getenv("KREACT_ROOTS_CHILD") == "1" {
		verifyMozillaRoot(t)
		return
	}
	empty := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRootsWithoutSystemRoots$", "-test.v")
	cmd.Env = append(os.Environ(), "KREACT_ROOTS_CHILD=1", "SSL_CERT_FILE="+empty+"/none.pem", "SSL_CERT_DIR="+empty)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("without system roots: %v\n%s", err, out)
	}
}

func verifyMozillaRoot(t *testing.T) {
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		cert, err := x509.ParseCertificate(root.Certificate)
		if err != nil {
			t.Fatal(err)
		}
		// Roots nil: the system pool, which here is the fallback bundle.
		if _, err := cert.Verify(x509.VerifyOptions{}); err != nil {
			t.Fatalf("%s does not verify without system roots: %v", cert.Subject, err)
		}
		return
	}
	t.Fatal("the fallback bundle holds no unconstrained root")
}
