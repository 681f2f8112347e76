package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

// History is everything a run did and saw, as the oracle reads it.
type History struct {
	Seed   uint64
	Shards bool // the run had several replicas
	Start  time.Time
	// OpsEnd is when the last operation was done; End when kreact had
	// settled and the final state was read.
	OpsEnd, End time.Time
	// Ops are the operations made, in order.
	Ops    []Op
	Calls  []Call
	Writes []Write
	Faults []Fault
	Procs  []Proc
	Final  Final
}

// Call is one probe line: a handler call as it started.
type Call struct {
	Proc     int // index in History.Procs
	Rule     string
	Handler  string
	Name     string
	UID      string
	RV       int64
	OldRV    int64
	Initial  bool
	Once     bool
	Deadline time.Time // of the timer it armed (p-fin)
	At       time.Time
	Changed  string
	Rev      int // the revision of the rule's file that made the call
	// L and OldL are the label l of the object, and of the old one of an
	// onUpdate; Sel is the values of l a selector probe's selector
	// selects, comma-separated ("" for the other probes).
	L, OldL, Sel string
	// Fin and OldFin are the finalizers of the object, and of the old
	// one of an onUpdate, comma-separated; Deleting is whether the object
	// had a deletionTimestamp.
	Fin, OldFin string
	Deleting    bool
}

// Write is one change the checker made, with the resourceVersion the API
// server gave it. Paths are the top-level parts it changed: data,
// metadata.labels, metadata.annotations, spec, status, or "" for a delete.
type Write struct {
	Kind     Kind
	Resource string
	Name     string
	UID      string
	RV       int64
	Path     string
	Value    string
	// Held is, for a delete, the probes whose finalizer the object
	// carried just before: each owes it an onDelete, p-sel2 only if its
	// selector still selects the object (onDeletePerDelete).
	Held []string
	At   time.Time
}

// Fault is a window in which the docs allow a call to repeat or a change to
// reach a rule late: a replica stopped or started, the API server
// restarted, a rule edited. Rule is empty for a fault that touches every
// rule.
type Fault struct {
	Kind     Kind
	Rule     string
	From, To time.Time
}

// Proc is one kreact process.
type Proc struct {
	Slot       int
	Log        string
	Start, End time.Time
	Killed     bool
	Previous   bool // it ran the previous build (-from)
}

// Final is the state the checker read once kreact had settled.
type Final struct {
	ConfigMaps []Object // in the main namespace
	Widgets    []Object
	Gadgets    []Object // widgets without a status subresource
	Owned      []Object // ConfigMaps in the widgets' namespace
	Copies     []Object
	Forbidden  []Object
	// Generations are the widgets' and gadgets' generations by uid, read
	// again a few seconds after them: a rule that keeps writing moves
	// them.
	Generations map[string]int64
}

// Object is what the oracle needs of an object in the final state.
type Object struct {
	Name, UID   string
	RV          int64
	Generation  int64
	Terminating bool
	Labels      map[string]string
	Annotations map[string]string
	Finalizers  []string
	Data        map[string]string
	Kind        string
	Ready       string // a widget's spec.ready, "true" or "false"
	Conditions  []Condition
	Owners      []Owner
}

// Condition is one of status.conditions.
type Condition struct {
	Type, Status       string
	ObservedGeneration int64
	LastTransitionTime time.Time
}

// Owner is one of metadata.ownerReferences.
type Owner struct {
	UID        string
	Controller bool
}

// readCalls parses the probe lines of kreact's JSON log of process p.
func readCalls(path string, p int) ([]Call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg      string `json:"msg"`
			Rule     string `json:"rule"`
			H        string `json:"h"`
			UID      string `json:"uid"`
			RV       string `json:"rv"`
			OldRV    string `json:"oldrv"`
			Obj      string `json:"obj"`
			Initial  bool   `json:"initial"`
			Once     bool   `json:"once"`
			Deadline int64  `json:"deadline"`
			At       int64  `json:"at"`
			Changed  string `json:"changed"`
			Rev      int    `json:"rev"`
			L        string `json:"l"`
			OldL     string `json:"oldl"`
			Sel      string `json:"sel"`
			Fin      string `json:"fin"`
			OldFin   string `json:"oldfin"`
			Deleting bool   `json:"deleting"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "probe" {
			continue
		}
		c := Call{Proc: p, Rule: l.Rule, Handler: l.H, Name: l.Obj, UID: l.UID, RV: rv(l.RV), OldRV: rv(l.OldRV),
			Initial: l.Initial, Once: l.Once, At: time.UnixMilli(l.At), Changed: l.Changed, Rev: l.Rev, L: l.L, OldL: l.OldL, Sel: l.Sel,
			Fin: l.Fin, OldFin: l.OldFin, Deleting: l.Deleting}
		if l.Deadline > 0 {
			c.Deadline = time.UnixMilli(l.Deadline)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// rv parses a resourceVersion: etcd revisions, which the API server
// gives in increasing order (kreact compares them the same way).
func rv(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
