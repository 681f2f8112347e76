// Package kube wires kreact's watch stack for one cluster: the dynamic
// client, the discovery cache (refreshed by CRD and APIService changes), the
// RESTMapper over it and the informer manager. The CLI and the end-to-end
// tests build it the same way.
package kube
