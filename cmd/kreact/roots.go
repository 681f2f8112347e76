package main

// The container image is built FROM scratch and has no /etc/ssl: kreact
// carries Mozilla's roots (through the Go team's fallback bundle) for TLS to
// webhook targets of kreact.http and to exec or OIDC credential endpoints.
// They are used only where the system has no roots of its own, so a host's
// or a mounted bundle (SSL_CERT_FILE, SSL_CERT_DIR) still wins. The API server
// itself is verified against the kubeconfig's or the service account's CA.
import _ "golang.org/x/crypto/x509roots/fallback"
