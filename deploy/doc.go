// Package deploy holds kreact's Kubernetes manifests (a kustomize base, see
// README.md) and, in its tests, their check against a real API server: a
// server-side dry run of the whole base, a real apply, the RBAC seen
// from kreact's ServiceAccount, and the container image run with podman as
// the Deployment's Pod would run it. The Helm chart in charts/kreact is
// tested here too, against the same base: its rendering compared object
// by object with this one, each documented values combination linted,
// rendered and dry-run on the API server, and the README's quickstart
// installed and its Pod run with podman. There is no Go code to import
// here.
package deploy
