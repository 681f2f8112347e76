// Package testcluster runs a real Kubernetes control plane (etcd,
// kube-apiserver and, on request, kube-controller-manager) on loopback for
// kreact's end-to-end tests and its demo.
//
// The binaries are built from pinned Go modules by `make controlplane` into
// the repository's bin/ folder (hack/controlplane is a separate Go module so
// that k8s.io/kubernetes never enters kreact's own module graph).
//
// The processes are managed here rather than through controller-runtime's
// envtest for three reasons: the fault tests stop and restart the API server
// and etcd mid-test on the same ports, the controller manager runs beside
// them, and kreact's module stays free of controller-runtime. Everything is
// started in its own process group with a parent-death signal, so a crashed
// test binary does not leave etcd or an API server behind.
//
// One control plane per test binary: call Main from TestMain.
//
// Tests that need the control plane live in files with the build constraint
// //go:build e2e; `make test` runs them with -tags e2e and `make unit` runs
// the rest with no cluster. Main exists only in e2e builds, and Start fails
// with ErrUnitBuild in any other test binary, so a test that needs the
// control plane cannot run, or skip, in the unit set unnoticed. Eventually
// and LogBuffer need no cluster and serve both sets.
package testcluster
