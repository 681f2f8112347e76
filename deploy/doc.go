// Package deploy holds kreact's Kubernetes manifests (a kustomize base, see
// README.md) and, in its tests, their check against a real API server: a
// server-side dry run of the whole base, a real apply, the RBAC seen
// from kreact's ServiceAccount, and the container image run with podman as
// the Deployment's Pod would run it. There is no Go code to import here.
package deploy
