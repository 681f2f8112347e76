//go:build e2e

package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The image test needs podman and runc; without them it fails with this.
const installPodman = "the image test runs the container image with podman and runc: install them with `apt-get install -y podman runc` (.ci/run does)"

// podmanRunFlags are what running a container needs on machines like CI's,
// whatever the Deployment says: runc, because crun refuses the hybrid cgroup
// layout there; explicit ulimits, because podman's defaults (1048576 open
// files) are above the hard limits a container host may set and runc may
// not raise them; the host's network, because the test control plane
// serves on loopback only (a Pod reaches its API server through the
// kubernetes Service instead).
var podmanRunFlags = []string{
	"--runtime=runc",
	"--ulimit=nofile=1024:1024", "--ulimit=nproc=1024:1024",
	"--network=host",
}

// serviceAccountDir is where the kubelet mounts a Pod's service-account
// token, CA and namespace, and where client-go's in-cluster config reads
// them.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// TestImageRunsLikeAPod runs kreact's container image as the Deployment in
// deploy/ would run it in a cluster, against the test control plane: its
// ServiceAccount with the RBAC of rbac.yaml (and rule-objects.yaml) and a TokenRequest token, the
// token, CA and namespace mounted as the kubelet mounts them, the rules as
// their ConfigMap volume, the API server found through
// KUBERNETES_SERVICE_HOST/PORT, and the container's user, read-only root
// filesystem, capabilities, environment, limits and probes taken from
// deployment.yaml. kreact must find its in-cluster config, pass its probes,
// lead, react to a new namespace with deploy/rules' rule, and stop cleanly
// on SIGTERM.
func TestImageRunsLikeAPod(t *testing.T) {
	image := imageUnderTest(t)
	mustKubectl(t, "apply", "-f", "namespace.yaml", "-f", "rbac.yaml", "-f", "rule-objects.yaml")
	rules := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join("rules", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("deploy/rules: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rules[filepath.Base(f)] = data
	}
	runLikeAPod(t, image, podUnderTest{
		namespace: kustomizeNamespace(t),
		dep:       readDeployment(t),
		// deploy/rules is the generated ConfigMap's content (see
		// kustomization.yaml).
		rules: map[string]map[string][]byte{"kreact-rules": rules},
		// deploy/rules' rule labels every new namespace.
		reacted: func(ns *corev1.Namespace) bool { return ns.Labels["kreact.dev/seen"] == "true" },
	})
}

// podUnderTest is what runLikeAPod runs: a Deployment's Pod, in its
// namespace, whose ServiceAccount and RBAC exist.
type podUnderTest struct {
	namespace string
	dep       *appsv1.Deployment
	// rules are the ConfigMap volumes' content: ConfigMap name, then file.
	rules map[string]map[string][]byte
	// reacted says whether the rules have reacted to a new namespace.
	reacted func(*corev1.Namespace) bool
}

// runLikeAPod runs the image as the Pod of p.dep, against the test
// control plane, and checks what TestImageRunsLikeAPod says.
func runLikeAPod(t *testing.T, image string, p podUnderTest) {
	t.Helper()
	dep, namespace := p.dep, p.namespace
	if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("deployment %s has %d containers; the test runs one", dep.Name, n)
	}
	pod := dep.Spec.Template.Spec
	ctr := pod.Containers[0]

	// runAsNonRoot: the kubelet refuses an image whose user is not a
	// numeric non-root one unless the Pod names a user.
	user := strings.TrimSpace(mustPodman(t, "image", "inspect", "--format", "{{.Config.User}}", image))
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("image user %q: runAsNonRoot needs a numeric non-root user", user)
	}

	client := kubernetes.NewForConfigOrDie(cluster.Config())
	token, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), pod.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for ServiceAccount %s/%s: %v", namespace, pod.ServiceAccountName, err)
	}
	apiServer, err := url.Parse(cluster.Config().Host)
	if err != nil {
		t.Fatal(err)
	}
	// The serving certificate (internal/testcluster/certs.go) is valid for
	// 127.0.0.1, and in-cluster config checks it for this host.
	if apiServer.Hostname() != "127.0.0.1" {
		t.Fatalf("API server at %s, want 127.0.0.1", apiServer.Host)
	}

	name := "kreact-image-test-" + randomSuffix(t)
	args := []string{"run", "--detach", "--name", name,
		// The Pod's name is its hostname, and so kreact's lease identity.
		"--hostname", name,
		"--env", "KUBERNETES_SERVICE_HOST=" + apiServer.Hostname(),
		"--env", "KUBERNETES_SERVICE_PORT=" + apiServer.Port(),
		"--volume", kubeletVolume(t, map[string][]byte{
			"token":     []byte(token.Status.Token),
			"ca.crt":    cluster.Config().CAData,
			"namespace": []byte(namespace),
		}) + ":" + serviceAccountDir + ":ro",
	}
	args = append(args, podmanRunFlags...)
	args = append(args, securityFlags(t, pod, ctr)...)
	args = append(args, resourceFlags(t, ctr)...)
	args = append(args, volumeFlags(t, pod, ctr, p.rules)...)
	// Host networking shares ports with everything else on the machine:
	// each container port the arguments bind moves to a free one.
	cargs, ports := remapPorts(t, ctr)
	args = append(args, image)
	args = append(args, cargs...)

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := podman(context.Background(), "logs", name)
			t.Logf("container log:\n%s", out)
		}
		if out, err := podman(context.Background(), "rm", "--force", "--time=0", name); err != nil {
			t.Errorf("remove container %s: %v\n%s", name, err, out)
		}
	})
	mustPodman(t, args...)

	// In-cluster config, from the mounted service account and the
	// environment, with no kubeconfig anywhere in the image.
	connect := waitLog(t, name, 30*time.Second, func(l logLine) bool { return l["msg"] == "connecting to the API server" })
	if connect["config"] != "in-cluster" || connect["server"] != cluster.Config().Host {
		t.Fatalf("kreact connected with config=%v server=%v; want in-cluster and %s", connect["config"], connect["server"], cluster.Config().Host)
	}

	// The probes, as the kubelet sends them: startup, then liveness and
	// readiness.
	probe := func(p *corev1.Probe, within time.Duration) {
		t.Helper()
		port := probePort(t, ctr, p, ports)
		addr := "http://127.0.0.1:" + strconv.Itoa(port) + p.HTTPGet.Path
		if err := waitHTTP(t.Context(), addr, within); err != nil {
			t.Fatalf("probe %s: %v", addr, err)
		}
	}
	startup := ctr.StartupProbe
	probe(startup, time.Duration(startup.PeriodSeconds*startup.FailureThreshold)*time.Second)
	probe(ctr.LivenessProbe, 10*time.Second)
	// A standby is ready as soon as it campaigns; the only replica must
	// then take the lease, under its Pod's name, in its own namespace, and
	// be ready as the leader, its rules synced.
	probe(ctr.ReadinessProbe, time.Minute)
	waitLease(t, client, namespace, func(holder string) bool { return strings.HasPrefix(holder, name+"_") })
	probe(ctr.ReadinessProbe, time.Minute)
	metricsPort := 0
	for _, p := range ctr.Ports {
		if p.Name == "metrics" {
			metricsPort = ports[p.ContainerPort]
		}
	}
	// The lease is written before kreact hears it won, so the gauge may
	// lag the lease by a moment.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		metrics := httpGet(t, "http://127.0.0.1:"+strconv.Itoa(metricsPort)+"/metrics")
		if strings.Contains(metrics, "\nkreact_leader 1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics do not report the leader within 30s:\n%s", metrics)
		}
	}

	// A reaction to a new namespace, as the ServiceAccount (its RBAC
	// allows patching namespaces).
	ns := "image-test-" + randomSuffix(t)
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.reacted(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reaction to namespace %s within 30s: labels %v", ns, got.Labels)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The kernel's view of the process: the Deployment's user and group,
	// no capabilities, no privilege escalation, a read-only root.
	checkProcess(t, name, pod)

	// A Pod is stopped with SIGTERM and its grace period: kreact finishes,
	// releases the lease and exits 0.
	grace := strconv.FormatInt(ptr.Deref(pod.TerminationGracePeriodSeconds, 30), 10)
	mustPodman(t, "stop", "--time", grace, name)
	if code := strings.TrimSpace(mustPodman(t, "inspect", "--format", "{{.State.ExitCode}}", name)); code != "0" {
		t.Errorf("exit code %s after SIGTERM, want 0", code)
	}
	waitLog(t, name, 5*time.Second, func(l logLine) bool { return l["msg"] == "stopped" })
	waitLease(t, client, namespace, func(holder string) bool { return holder == "" })
}

// waitLease waits until the holder of the Lease "kreact" suits want.
func waitLease(t *testing.T, client kubernetes.Interface, namespace string, want func(holder string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lease, err := client.CoordinationV1().Leases(namespace).Get(t.Context(), "kreact", metav1.GetOptions{})
		holder := "(no lease)"
		if err == nil {
			holder = ptr.Deref(lease.Spec.HolderIdentity, "")
			if want(holder) {
				return
			}
		} else if !apierrors.IsNotFound(err) {
			t.Fatalf("lease: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease %s/kreact held by %q after 30s", namespace, holder)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkProcess looks at kreact's process: its user and group as the
// container sees them (podman top, which maps a rootless podman's IDs), the
// rest in the host's /proc (the test runs where podman runs containers).
func checkProcess(t *testing.T, container string, pod corev1.PodSpec) {
	t.Helper()
	top := strings.Fields(mustPodman(t, "top", container, "user", "group"))
	want := []string{"USER", "GROUP", fmt.Sprint(*pod.SecurityContext.RunAsUser), fmt.Sprint(*pod.SecurityContext.RunAsGroup)}
	if !slices.Equal(top, want) {
		t.Errorf("container processes (podman top): %q, want %q", top, want)
	}
	pid := strings.TrimSpace(mustPodman(t, "inspect", "--format", "{{.State.Pid}}", container))
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatalf("kreact's process: %v", err)
	}
	fields := map[string]string{}
	for line := range strings.SplitSeq(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	for _, c := range []struct{ field, want string }{
		{"CapEff", "0000000000000000"},
		{"CapPrm", "0000000000000000"},
		{"CapBnd", "0000000000000000"},
		{"NoNewPrivs", "1"},
		{"Seccomp", "2"}, // a filter: the runtime's default profile
	} {
		if got := fields[c.field]; got != c.want {
			t.Errorf("kreact's process %s: %q, want %q", c.field, got, c.want)
		}
	}
	mounts, err := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(mounts), "\n") {
		// ID parent major:minor root mountpoint options ...
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			if !slices.Contains(strings.Split(f[5], ","), "ro") {
				t.Errorf("root filesystem mounted %s, want ro", f[5])
			}
			return
		}
	}
	t.Errorf("no root mount in kreact's mountinfo:\n%s", mounts)
}

// TestDockerfilesAgree checks that Dockerfile.prebuilt (make image) builds
// the final stage of Dockerfile: the same instructions, the binary copied
// from the build context instead of the build stage.
func TestDockerfilesAgree(t *testing.T) {
	final := func(file string) []string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		var stage []string
		for line := range strings.SplitSeq(string(data), "\n") {
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "FROM "):
				stage = []string{line}
			case line != "" && !strings.HasPrefix(line, "#"):
				stage = append(stage, line)
			}
		}
		return stage
	}
	multi, prebuilt := final("Dockerfile"), final("Dockerfile.prebuilt")
	want := strings.Join(multi, "\n")
	want = strings.Replace(want, "COPY --from=build /out/kreact /kreact", "COPY kreact /kreact", 1)
	if got := strings.Join(prebuilt, "\n"); got != want {
		t.Errorf("Dockerfile.prebuilt's image differs from Dockerfile's final stage:\n--- Dockerfile (binary from the context)\n%s\n--- Dockerfile.prebuilt\n%s", want, got)
	}
}

// imageUnderTest is $KREACT_IMAGE (make test sets it to what `make image`
// built), or an image built here as `make image` builds it and removed
// afterwards.
func imageUnderTest(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatalf("%s: %v", installPodman, err)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		if _, err := os.Stat("/usr/sbin/runc"); err != nil {
			t.Fatalf("%s: runc not found", installPodman)
		}
	}
	if image := os.Getenv("KREACT_IMAGE"); image != "" {
		return image
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go, to build the image's binary: %v", err)
	}
	buildCtx := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(buildCtx, "kreact"), "../cmd/kreact")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the static binary: %v\n%s", err, out)
	}
	image := "localhost/kreact:test-" + randomSuffix(t)
	mustPodman(t, "build", "--pull=never", "--quiet", "--file", "../Dockerfile.prebuilt", "--tag", image, buildCtx)
	t.Cleanup(func() {
		if out, err := podman(context.Background(), "rmi", "--force", image); err != nil {
			t.Errorf("remove image %s: %v\n%s", image, err, out)
		}
	})
	return image
}

func podman(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "podman", args...).CombinedOutput()
	return string(out), err
}

func mustPodman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podman(t.Context(), args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func readDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	data, err := os.ReadFile("deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &dep); err != nil {
		t.Fatalf("deployment.yaml: %v", err)
	}
	if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("deployment.yaml has %d containers; the test runs one", n)
	}
	return &dep
}

func kustomizeNamespace(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Namespace string `json:"namespace"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil || k.Namespace == "" {
		t.Fatalf("kustomization.yaml names no namespace (%v)", err)
	}
	return k.Namespace
}

// securityFlags are the Pod's and the container's security contexts.
func securityFlags(t *testing.T, pod corev1.PodSpec, ctr corev1.Container) []string {
	t.Helper()
	psc, sc := pod.SecurityContext, ctr.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("the Deployment: the test expects a pod and a container securityContext")
	}
	runAsUser, runAsGroup := psc.RunAsUser, psc.RunAsGroup
	if sc.RunAsUser != nil {
		runAsUser = sc.RunAsUser
	}
	if sc.RunAsGroup != nil {
		runAsGroup = sc.RunAsGroup
	}
	if runAsUser == nil || runAsGroup == nil {
		t.Fatal("the Deployment: no runAsUser/runAsGroup")
	}
	if !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
		t.Error("the Deployment: the container's root filesystem is not read-only")
	}
	flags := []string{
		fmt.Sprintf("--user=%d:%d", *runAsUser, *runAsGroup),
		// Read-only as in a Pod: no tmpfs over /tmp, /run and /var/tmp,
		// only the volumes the Deployment mounts.
		"--read-only", "--read-only-tmpfs=false",
	}
	if !ptr.Deref(sc.AllowPrivilegeEscalation, true) {
		flags = append(flags, "--security-opt=no-new-privileges")
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Drop {
			flags = append(flags, "--cap-drop="+strings.ToLower(string(c)))
		}
		for _, c := range sc.Capabilities.Add {
			flags = append(flags, "--cap-add="+string(c))
		}
	}
	for _, s := range []*corev1.SeccompProfile{psc.SeccompProfile, sc.SeccompProfile} {
		// podman's default seccomp profile is the runtime's default.
		if s != nil && s.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Fatalf("the Deployment: seccomp profile %s; the test knows RuntimeDefault only", s.Type)
		}
	}
	return flags
}

// resourceFlags are the container's limits and its environment, with
// resourceFieldRef values resolved as the kubelet resolves them.
func resourceFlags(t *testing.T, ctr corev1.Container) []string {
	t.Helper()
	var flags []string
	if m, ok := ctr.Resources.Limits[corev1.ResourceMemory]; ok {
		flags = append(flags, "--memory="+strconv.FormatInt(m.Value(), 10))
	}
	if c, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok {
		flags = append(flags, "--cpus="+c.AsDec().String())
	}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			flags = append(flags, "--env="+e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			m := ctr.Resources.Limits[corev1.ResourceMemory]
			flags = append(flags, "--env="+e.Name+"="+strconv.FormatInt(m.Value(), 10))
		default:
			t.Fatalf("the Deployment: env %s: the test knows values and limits.memory only", e.Name)
		}
	}
	return flags
}

// volumeFlags mount the container's volumes: a ConfigMap of rules (its
// content) as the kubelet lays it out, an emptyDir as a tmpfs of its size
// limit.
func volumeFlags(t *testing.T, pod corev1.PodSpec, ctr corev1.Container, rules map[string]map[string][]byte) []string {
	t.Helper()
	var flags []string
	for _, m := range ctr.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == m.Name {
				vol = &pod.Volumes[i]
			}
		}
		switch {
		case vol == nil:
			t.Fatalf("volumeMount %s names no volume", m.Name)
		case vol.ConfigMap != nil && rules[vol.ConfigMap.Name] != nil:
			mode := ":rw"
			if m.ReadOnly {
				mode = ":ro"
			}
			flags = append(flags, "--volume="+kubeletVolume(t, rules[vol.ConfigMap.Name])+":"+m.MountPath+mode)
		case vol.EmptyDir != nil:
			opt := "type=tmpfs,destination=" + m.MountPath + ",tmpfs-mode=1777"
			if vol.EmptyDir.SizeLimit != nil {
				opt += ",tmpfs-size=" + strconv.FormatInt(vol.EmptyDir.SizeLimit.Value(), 10)
			}
			flags = append(flags, "--mount="+opt)
		default:
			t.Fatalf("volume %s: the test knows the rules' ConfigMap and emptyDir only", vol.Name)
		}
	}
	return flags
}

// kubeletVolume writes files as the kubelet writes a ConfigMap or projected
// volume (its atomic writer): a timestamped folder, a "..data" link to it,
// and one link per file into "..data"; files 0644 (the default mode).
func kubeletVolume(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := "..2026_01_02_03_04_05.000000001"
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		path := filepath.Join(dir, ts, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// WriteFile's mode is masked by the umask; the kubelet's is not.
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// remapPorts returns the container's arguments with each container port
// they bind (":8081") moved to a free port of the host, and the mapping.
func remapPorts(t *testing.T, ctr corev1.Container) ([]string, map[int32]int) {
	t.Helper()
	args := append([]string(nil), ctr.Args...)
	ports := map[int32]int{}
	for _, p := range ctr.Ports {
		suffix := ":" + strconv.Itoa(int(p.ContainerPort))
		free := freePort(t)
		found := false
		for i, a := range args {
			if strings.HasSuffix(a, suffix) {
				args[i] = strings.TrimSuffix(a, suffix) + ":" + strconv.Itoa(free)
				found = true
			}
		}
		if !found {
			t.Fatalf("the Deployment: no argument binds container port %s (%d)", p.Name, p.ContainerPort)
		}
		ports[p.ContainerPort] = free
	}
	return args, ports
}

// probePort is the host port an HTTP probe reaches: its port, by number or
// by the container port's name.
func probePort(t *testing.T, ctr corev1.Container, p *corev1.Probe, ports map[int32]int) int {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Fatal("the Deployment: the test expects HTTP probes")
	}
	port := p.HTTPGet.Port
	if port.Type == intstr.Int {
		return ports[port.IntVal]
	}
	for _, cp := range ctr.Ports {
		if cp.Name == port.StrVal {
			return ports[cp.ContainerPort]
		}
	}
	t.Fatalf("the Deployment: probe port %q names no container port", port.StrVal)
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP polls addr until it answers 200.
func waitHTTP(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last string
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, addr, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return nil
			}
			last = resp.Status + ": " + strings.TrimSpace(string(body))
		} else {
			last = err.Error()
		}
		cancel()
		if time.Now().After(deadline) {
			return fmt.Errorf("not 200 within %s; last answer: %s", within, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func httpGet(t *testing.T, addr string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, addr, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// logLine is one line of kreact's JSON log (--log-format=json).
type logLine map[string]any

// waitLog waits for a line of the container's log that match accepts.
func waitLog(t *testing.T, container string, within time.Duration, match func(logLine) bool) logLine {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, err := podman(t.Context(), "logs", container)
		if err != nil {
			t.Fatalf("podman logs: %v\n%s", err, out)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l logLine
			if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &l) == nil && match(l) {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such log line within %s", within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
