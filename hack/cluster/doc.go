// Command cluster starts and stops a local Kubernetes control plane for
// people: etcd, kube-apiserver and kube-controller-manager built into bin/
// by `make controlplane`.
//
//	go run ./hack/cluster up     # until Ctrl-C; kubeconfig in .kreact-dev/kubeconfig
//	go run ./hack/cluster down   # stops one left running by `up`
package main
