package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kreact/kreact/admission"
)

// runBare is the baseline: the validating webhook a Go programmer would
// write for the owner check, with nothing kreact adds. It prints its CA
// ("ca BASE64"), then "serving" once it listens, and serves until
// SIGTERM.
func runBare(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	certs, err := admission.GenerateCertificates([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// As kreact's server (admission.Server).
	srv := &http.Server{
		Handler:           http.HandlerFunc(serveReview),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
	}
	fmt.Printf("ca %s\nserving\n", base64.StdEncoding.EncodeToString(certs.CABundle()))
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveReview answers one AdmissionReview: a ConfigMap without an owner
// label is refused.
func serveReview(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "want an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	review.Response = check(review.Request)
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// check is the owner check.
func check(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		resp.Allowed = false
		resp.Result = &metav1.Status{Message: "bare: " + err.Error()}
	} else if obj.Metadata.Labels["owner"] == "" {
		resp.Allowed = false
		resp.Result = &metav1.Status{Message: bareDenial}
	}
	return resp
}
