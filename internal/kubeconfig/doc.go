// Package kubeconfig turns kubectl-style flags into a *rest.Config the way
// kubectl does: --kubeconfig, then $KUBECONFIG (a list of files, merged),
// then ~/.kube/config, and the in-cluster service account when none of
// those exist and kreact runs in a pod. --context picks a context and the
// context's namespace is the default namespace.
package kubeconfig
