package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure a control plane.
type Options struct {
	// ControllerManager also starts kube-controller-manager, for garbage
	// collection, namespace deletion, Deployments and service-account
	// tokens. False starts etcd and kube-apiserver only; the ServiceAccount
	// extra plugin is then disabled, since nothing would create the
	// default ServiceAccount that Pods need.
	ControllerManager bool
	// Dir holds data, credentials, logs and the kubeconfig. Empty means a new
	// temporary directory, removed by Stop.
	Dir string
	// BinDir holds etcd, kube-apiserver and kube-controller-manager. Empty
	// means $KREACT_BIN_DIR or the repository's bin/.
	BinDir string
	// StartTimeout bounds how long Start waits for readiness. Zero means 90s.
	StartTimeout time.Duration
	// FeatureGates are passed to kube-apiserver as --feature-gates, e.g.
	// {"ShardedListAndWatch": true}. Nil or empty passes no flag: the
	// server's defaults.
	FeatureGates map[string]bool
	// AdmissionPlugins are enabled in kube-apiserver on top of its
	// default ones, e.g. OwnerReferencesPermissionEnforcement.
	AdmissionPlugins []string
	// EtcdQuotaBytes is etcd's --quota-backend-bytes, the size past which
	// etcd raises its NOSPACE alarm and refuses writes. Zero means etcd's
	// default, 2 GiB: enough for every test, not for a million 1 KiB
	// objects (hack/bench's -million phase asks for more).
	EtcdQuotaBytes int64
}

// Cluster is a running control plane. Its methods are safe to call from one
// goroutine at a time (tests).
type Cluster struct {
	opts    Options
	dir     string
	tempDir bool
	creds   *credentials
	apiPort int

	etcd, apiserver, controllerManager *process

	kubeconfig string
}

// Start starts etcd, kube-apiserver and, if asked, the controller manager,
// and returns when the API server is ready. On error nothing is left running.
// In a test binary built without the e2e tag it fails with ErrUnitBuild, so
// a test that needs the control plane cannot hide in the unit set.
func Start(opts Options) (c *Cluster, err error) {
	if testing.Testing() && !e2eBuild {
		return nil, ErrUnitBuild
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 90 * time.Second
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = findBinDir(); err != nil {
			return nil, err
		}
	}
	bins := []string{"etcd", "kube-apiserver"}
	if opts.ControllerManager {
		bins = append(bins, "kube-controller-manager")
	}
	for _, bin := range bins {
		if _, err := os.Stat(filepath.Join(opts.BinDir, bin)); err != nil {
			return nil, fmt.Errorf("control-plane binary %s missing in %s (run `make controlplane`): %w", bin, opts.BinDir, err)
		}
	}
	c = &Cluster{opts: opts, dir: opts.Dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "kreact-cluster-"); err != nil {
			return nil, err
		}
		c.tempDir = true
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	// The named result c is nil by the time an error is returned.
	started := c
	defer func() {
		if err != nil {
			_ = started.Stop()
		}
	}()
	if c.creds, err = writeCredentials(c.dir); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	c.apiPort = ports[2]
	c.etcd = &process{
		name:    "etcd",
		path:    filepath.Join(opts.BinDir, "etcd"),
		logFile: filepath.Join(c.dir, "etcd.log"),
		args: []string{
			"--data-dir=" + filepath.Join(c.dir, "etcd"),
			"--listen-client-urls=" + etcdURL,
			"--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=http://127.0.0.1:" + strconv.Itoa(ports[1]),
			"--unsafe-no-fsync",
		},
	}
	if opts.EtcdQuotaBytes > 0 {
		c.etcd.args = append(c.etcd.args, "--quota-backend-bytes="+strconv.FormatInt(opts.EtcdQuotaBytes, 10))
	}
	extra := []string{} // flags that depend on opts
	if !opts.ControllerManager {
		extra = append(extra, "--disable-admission-plugins=ServiceAccount")
	}
	if gates := featureGatesFlag(opts.FeatureGates); gates != "" {
		extra = append(extra, "--feature-gates="+gates)
	}
	if len(opts.AdmissionPlugins) > 0 {
		extra = append(extra, "--enable-admission-plugins="+strings.Join(opts.AdmissionPlugins, ","))
	}
	c.apiserver = &process{
		name:    "kube-apiserver",
		path:    filepath.Join(opts.BinDir, "kube-apiserver"),
		logFile: filepath.Join(c.dir, "kube-apiserver.log"),
		args: append([]string{
			"--etcd-servers=" + etcdURL,
			"--secure-port=" + strconv.Itoa(c.apiPort),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
			"--tls-cert-file=" + c.creds.servingCertFile,
			"--tls-private-key-file=" + c.creds.servingKeyFile,
			"--client-ca-file=" + c.creds.caFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + c.creds.saPubFile,
			"--service-account-signing-key-file=" + c.creds.saKeyFile,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--authorization-mode=RBAC",
			"--profiling=false",
		}, extra...),
	}
	if err := c.startEtcd(); err != nil {
		return nil, err
	}
	if err := c.StartAPIServer(); err != nil {
		return nil, err
	}
	if c.kubeconfig, err = c.writeKubeconfig(); err != nil {
		return nil, err
	}
	if opts.ControllerManager {
		c.controllerManager = &process{
			name:    "kube-controller-manager",
			path:    filepath.Join(opts.BinDir, "kube-controller-manager"),
			logFile: filepath.Join(c.dir, "kube-controller-manager.log"),
			args: []string{
				"--kubeconfig=" + c.kubeconfig,
				"--authentication-kubeconfig=" + c.kubeconfig,
				"--authorization-kubeconfig=" + c.kubeconfig,
				"--service-account-private-key-file=" + c.creds.saKeyFile,
				"--root-ca-file=" + c.creds.caFile,
				"--use-service-account-credentials=false",
				"--leader-elect=false",
				"--secure-port=0",
				"--controllers=*",
			},
		}
		if err := c.controllerManager.start(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Config returns a new admin *rest.Config (client certificate in
// system:masters) for the API server.
func (c *Cluster) Config() *rest.Config {
	return &rest.Config{
		Host: "https://127.0.0.1:" + strconv.Itoa(c.apiPort),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.creds.caCert,
			CertData: c.creds.adminCert,
			KeyData:  c.creds.adminKey,
		},
		QPS:   200,
		Burst: 400,
	}
}

// KubeconfigPath returns the path of a kubeconfig file for the admin user,
// usable with kubectl and kreact's --kubeconfig.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfig }

// Dir returns the folder holding the cluster's data, logs and kubeconfig.
func (c *Cluster) Dir() string { return c.dir }

// StopAPIServer stops kube-apiserver, leaving etcd running.
func (c *Cluster) StopAPIServer() error { return c.apiserver.stop(15 * time.Second) }

// KillAPIServer kills kube-apiserver at once (SIGKILL after SIGTERM, with
// no grace), as a crash or an OOM kill would, leaving etcd running.
func (c *Cluster) KillAPIServer() error { return c.apiserver.stop(0) }

// StartAPIServer starts kube-apiserver (again) on the same port and waits
// until it is ready.
func (c *Cluster) StartAPIServer() error {
	if err := c.apiserver.start(); err != nil {
		return err
	}
	return c.waitReady(c.apiserver, c.opts.StartTimeout, func(ctx context.Context) error {
		return c.get(ctx, "/readyz")
	})
}

// Outages kills the API server once for each of downs, a second after it
// was last up, and starts it again after that long, failing t if either
// fails.
func (c *Cluster) Outages(t testing.TB, downs ...time.Duration) {
	t.Helper()
	for _, down := range downs {
		time.Sleep(time.Second)
		up := c.Down(t)
		time.Sleep(down)
		up()
	}
}

// Down kills the API server and returns the function that starts it
// again, failing t if either fails. If t ends before that function is
// called, t's cleanup starts the server, so that later tests have one.
func (c *Cluster) Down(t testing.TB) (up func()) {
	t.Helper()
	if err := c.KillAPIServer(); err != nil {
		t.Fatalf("kill API server: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := c.StartAPIServer(); err != nil {
				t.Errorf("restart API server: %v", err)
			}
		}
	})
	return func() {
		t.Helper()
		if err := c.StartAPIServer(); err != nil {
			t.Fatalf("start API server: %v", err)
		}
		restarted = true
	}
}

// StopEtcd stops etcd; the API server stays up but cannot serve storage.
func (c *Cluster) StopEtcd() error { return c.etcd.stop(15 * time.Second) }

// StartEtcd starts etcd again with the same data.
func (c *Cluster) StartEtcd() error { return c.startEtcd() }

func (c *Cluster) startEtcd() error {
	if err := c.etcd.start(); err != nil {
		return err
	}
	url := c.etcd.args[1][len("--listen-client-urls="):] + "/health"
	return c.waitReady(c.etcd, c.opts.StartTimeout, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd health: %s", resp.Status)
		}
		return nil
	})
}

// Stop stops every process and removes a temporary directory. It is safe to
// call more than once.
func (c *Cluster) Stop() error {
	for _, p := range []*process{c.controllerManager, c.apiserver, c.etcd} {
		if p != nil {
			_ = p.stop(15 * time.Second)
		}
	}
	if c.tempDir {
		return os.RemoveAll(c.dir)
	}
	return nil
}

func (c *Cluster) waitReady(p *process, timeout time.Duration, probe func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited during start; last log lines:\n%s", p.name, p.logTail())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = probe(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %v; last log lines:\n%s", p.name, timeout, last, p.logTail())
}

// get sends an authenticated GET to the API server and expects 200.
func (c *Cluster) get(ctx context.Context, path string) error {
	transport, err := rest.TransportFor(c.Config())
	if err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Config().Host+path, nil)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return nil
}

func (c *Cluster) writeKubeconfig() (string, error) {
	cfg := c.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kreact-dev"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["kreact-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["kreact-dev"] = &clientcmdapi.Context{Cluster: "kreact-dev", AuthInfo: "kreact-admin", Namespace: "default"}
	kc.CurrentContext = "kreact-dev"
	path := filepath.Join(c.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

// featureGatesFlag formats gates as kube-apiserver's --feature-gates value,
// sorted so that the command line is stable: "A=true,B=false".
func featureGatesFlag(gates map[string]bool) string {
	parts := make([]string, 0, len(gates))
	for name, on := range gates {
		parts = append(parts, name+"="+strconv.FormatBool(on))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ErrUnitBuild is returned by Start in a test binary built without
// -tags e2e (make unit): that build runs no control plane.
var ErrUnitBuild = errors.New("this test needs the control plane, but the test binary was built without -tags e2e: " +
	"give the test's file the build constraint //go:build e2e (make unit runs without a cluster, make test with one)")
