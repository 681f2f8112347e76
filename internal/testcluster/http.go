package testcluster

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// FreeAddr returns a loopback address that was free a moment ago, for a
// server under test to listen on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// HTTPGet GETs url and returns the status code and body. It uses a client
// of its own whose idle connections are closed before it returns, so that
// none outlives the test (goleak would report its goroutines).
func HTTPGet(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
