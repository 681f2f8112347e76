// Package clientstack builds kreact's client stack for one cluster: the
// REST and dynamic clients, the metadata client, the discovery cache
// (refreshed when a CRD or APIService changes), the RESTMapper over it and
// the informer manager. kreact's commands and the end-to-end tests build
// it the same way, here.
//
// It sits above the packages it assembles (discovery, restmapper,
// dynamicinformer), and below what uses the assembled stack (record and
// cmd/kreact): it is wiring, not machinery, so it is not under internal/,
// whose packages import no kreact package but diag and lifecycle.
//
// Guarantees: Connect and New run one discovery before they return, so
// that the Mapper resolves every resource the server served then; a
// server that cannot be reached is an error naming its host. Start (the
// function) and Stack.Start run the discovery cache and the informer
// manager until their context ends, and return, or let Wait return, only
// once both have stopped. Connect starts nothing: its Stack has no
// Informers and its discovery is not refreshed. Stack.Served tells
// whether the server serves a resource as discovery last saw it, and
// Stack.Refresh asks again, for a CRD created a moment ago.
package clientstack
