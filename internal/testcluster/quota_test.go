//go:build e2e

package testcluster

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestEtcdQuotaBytes starts a control plane with a backend quota of
// 3 GiB: etcd reports that quota in its own metrics, and the package's
// cluster, started with none, reports etcd's default of 2 GiB.
func TestEtcdQuotaBytes(t *testing.T) {
	c, err := Start(Options{EtcdQuotaBytes: 3 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if got, want := etcdQuota(t, c), "etcd_server_quota_backend_bytes 3.221225472e+09"; got != want {
		t.Errorf("with EtcdQuotaBytes 3 GiB, etcd says %q; want %q", got, want)
	}
	d, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop() })
	if got, want := etcdQuota(t, d), "etcd_server_quota_backend_bytes 2.147483648e+09"; got != want {
		t.Errorf("without EtcdQuotaBytes, etcd says %q; want %q (its default)", got, want)
	}
}

// etcdQuota returns the line of etcd's /metrics that gives its backend
// quota.
func etcdQuota(t *testing.T, c *Cluster) string {
	t.Helper()
	url := strings.TrimPrefix(c.etcd.args[1], "--listen-client-urls=") + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "etcd_server_quota_backend_bytes ") {
			return line
		}
	}
	t.Fatalf("etcd's /metrics has no etcd_server_quota_backend_bytes:\n%.2000s", body)
	return ""
}
