package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	widgetsCRD = testcluster.CRD{Group: "chaos.kreact.dev", Kind: "Widget", Plural: "widgets"}
	widgets    = widgetsCRD.GVR()
	gadgetsCRD = testcluster.CRD{Group: "chaos.kreact.dev", Kind: "Gadget", Plural: "gadgets", NoStatus: true}
	gadgets    = gadgetsCRD.GVR()
)

// Cluster is what a run needs of the control plane: a client, a
// kubeconfig for kreact, and API server restarts.
type Cluster interface {
	KubeconfigPath() string
	StopAPIServer() error
	KillAPIServer() error
	StartAPIServer() error
}

// Config is what a run is made of.
type Config struct {
	Kreact string // the kreact binary
	// From is the previous build, or "": each replica runs it until its
	// Upgrade operation, and Kreact from then on.
	From   string
	Dir    string // the run's files: rules and logs
	Name   string // the run's name: its namespaces' prefix
	Faults Faults
	Log    func(format string, args ...any)
}

// world runs operations against the control plane and kreact, and keeps
// the History.
type world struct {
	cfg     Config
	cluster Cluster
	client  dynamic.Interface
	ns      Namespaces
	rules   string // the rule files' directory
	rev     map[string]int
	broken  string
	mendAt  time.Time
	// unmended are the faults opened by replicas that started while a
	// rule file was broken: the rule does not run there until it is
	// mended (a broken edit keeps only a running rule's last version).
	unmended []int
	slots    []*replica
	h        *History
}

// replica is one kreact process slot.
type replica struct {
	cmd     *exec.Cmd
	proc    int // index in History.Procs
	exited  chan struct{}
	startAt time.Time // when to start it again; zero: it runs, or waits for StartRep
	fault   int       // index of the fault its stop opened, -1 if none
	old     bool      // it runs Config.From until its Upgrade
}

// run makes one run and returns its History;
// next gives the operations one at a time, until it returns false.
func run(ctx context.Context, cl Cluster, client dynamic.Interface, cfg Config, seed uint64, next func() (Op, bool)) (*History, error) {
	w := &world{cfg: cfg, cluster: cl, client: client, ns: namespacesOf(cfg.Name), rev: map[string]int{},
		h: &History{Seed: seed, Shards: cfg.Faults.Shards, Start: time.Now()}}
	if err := w.setUp(ctx); err != nil {
		return nil, err
	}
	defer w.stopAll()
	for op, ok := next(); ok; op, ok = next() {
		w.h.Ops = append(w.h.Ops, op)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := w.tend(); err != nil {
			return nil, err
		}
		if err := w.apply(ctx, op); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		sleep(ctx, op.Pause)
	}
	w.h.OpsEnd = time.Now()
	if err := w.settle(ctx); err != nil {
		return nil, err
	}
	w.stopAll()
	for i, p := range w.h.Procs {
		calls, err := readCalls(p.Log, i)
		if err != nil {
			return nil, err
		}
		w.h.Calls = append(w.h.Calls, calls...)
	}
	return w.h, nil
}

// setUp creates the run's namespaces and the widgets' CRD, writes the
// probe rules and starts the replicas.
func (w *world) setUp(ctx context.Context) error {
	for _, crd := range []testcluster.CRD{widgetsCRD, gadgetsCRD} {
		if err := testcluster.CreateCRD(ctx, w.client, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, ns := range []string{w.ns.Main, w.ns.Widgets, w.ns.Copies, w.ns.Forbidden, w.ns.Leases} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := w.client.Resource(namespaces).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	w.rules = filepath.Join(w.cfg.Dir, "rules")
	if err := os.MkdirAll(w.rules, 0o755); err != nil {
		return err
	}
	if err := writeProbes(w.rules, probes(w.ns, w.rev, "")); err != nil {
		return err
	}
	n := 1
	if w.cfg.Faults.Shards {
		n = 2
	}
	for range maxReplicas {
		w.slots = append(w.slots, &replica{fault: -1, old: w.cfg.From != ""})
	}
	for i := range n {
		if err := w.start(i); err != nil {
			return err
		}
	}
	// The replicas' first sync, so that the first operations find kreact
	// running.
	sleep(ctx, 3*time.Second)
	return nil
}

// start starts replica slot i.
func (w *world) start(i int) error {
	s := w.slots[i]
	log := filepath.Join(w.cfg.Dir, fmt.Sprintf("kreact-%d.log", len(w.h.Procs)))
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	args := []string{"run", "-f", w.rules, "--kubeconfig", w.cluster.KubeconfigPath(), "--log-format", "json",
		"--reload-interval", "300ms", "--admission-bind-address", "", "--metrics-bind-address", "", "--explain-address", ""}
	if w.cfg.Faults.Shards {
		args = append(args, "--shards", "--shard-identity", fmt.Sprintf("replica-%d", i), "--shard-group", w.cfg.Name,
			"--shard-namespace", w.ns.Leases, "--shard-lease-duration", "4s", "--shard-renew-period", "1s")
	}
	bin := w.cfg.Kreact
	if s.old {
		bin = w.cfg.From
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// kreact dies with the checker.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kreact: %w", err)
	}
	s.cmd, s.proc, s.exited, s.startAt = cmd, len(w.h.Procs), make(chan struct{}), time.Time{}
	w.h.Procs = append(w.h.Procs, Proc{Slot: i, Log: log, Start: time.Now(), Previous: s.old})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if s.fault >= 0 {
		w.h.Faults[s.fault].To = time.Now()
		s.fault = -1
	}
	if w.broken != "" {
		w.h.Faults = append(w.h.Faults, Fault{Kind: BadEdit, Rule: w.broken, From: time.Now(), To: w.mendAt})
		w.unmended = append(w.unmended, len(w.h.Faults)-1)
	}
	return nil
}

// mend writes the rule files without the broken one.
func (w *world) mend() error {
	w.broken = ""
	for _, i := range w.unmended {
		w.h.Faults[i].To = time.Now()
	}
	w.unmended = nil
	return writeProbes(w.rules, probes(w.ns, w.rev, ""))
}

// stop stops replica slot i with sig and waits for it to exit.
func (w *world) stop(i int, sig syscall.Signal) {
	s := w.slots[i]
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	p := &w.h.Procs[s.proc]
	p.End, p.Killed = time.Now(), sig == syscall.SIGKILL
	s.cmd = nil
}

func (w *world) stopAll() {
	for i := range w.slots {
		w.stop(i, syscall.SIGTERM)
	}
}

// tend starts the replicas whose down time is over and mends a broken
// rule file when its time has come.
func (w *world) tend() error {
	now := time.Now()
	for i, s := range w.slots {
		if s.cmd == nil && !s.startAt.IsZero() && !s.startAt.After(now) {
			if err := w.start(i); err != nil {
				return err
			}
		}
	}
	if w.broken != "" && !w.mendAt.After(now) {
		return w.mend()
	}
	return nil
}

// apply makes op.
func (w *world) apply(ctx context.Context, op Op) error {
	switch op.Kind {
	case Wait:
		sleep(ctx, op.Down)
		return nil
	case Term, Kill, Upgrade:
		s := w.slots[op.Slot]
		if op.Kind == Upgrade {
			s.old = false
		}
		if s.cmd == nil {
			return nil
		}
		w.h.Faults = append(w.h.Faults, Fault{Kind: op.Kind, From: time.Now(), To: w.h.Start.Add(100 * 365 * 24 * time.Hour)})
		s.fault = len(w.h.Faults) - 1
		w.stop(op.Slot, map[Kind]syscall.Signal{Term: syscall.SIGTERM, Kill: syscall.SIGKILL, Upgrade: syscall.SIGTERM}[op.Kind])
		if op.Down != Forever {
			s.startAt = time.Now().Add(op.Down)
		}
		return nil
	case StartRep:
		if w.slots[op.Slot].cmd != nil {
			return nil
		}
		// A replica joining moves shards too.
		w.h.Faults = append(w.h.Faults, Fault{Kind: op.Kind, From: time.Now(), To: time.Now()})
		return w.start(op.Slot)
	case APIDown:
		from := time.Now()
		if err := w.cluster.StopAPIServer(); err != nil {
			return err
		}
		sleep(ctx, op.Down)
		if err := w.cluster.StartAPIServer(); err != nil {
			return err
		}
		w.h.Faults = append(w.h.Faults, Fault{Kind: op.Kind, From: from, To: time.Now()})
		return nil
	case Edit:
		w.rev[op.Rule]++
		w.h.Faults = append(w.h.Faults, Fault{Kind: op.Kind, Rule: op.Rule, From: time.Now(), To: time.Now()})
		return writeProbes(w.rules, probes(w.ns, w.rev, w.broken))
	case BadEdit:
		if w.broken != "" {
			return nil
		}
		// A broken edit keeps the rule's last good version running: no
		// fault window (the docs promise nothing is lost), except in
		// a replica that starts meanwhile (start).
		w.broken, w.mendAt = op.Rule, time.Now().Add(op.Down)
		return writeProbes(w.rules, probes(w.ns, w.rev, w.broken))
	}
	return w.write(ctx, op)
}

// write makes an object operation and records it when it changed the
// object.
func (w *world) write(ctx context.Context, op Op) error {
	res := w.client.Resource(configMaps).Namespace(w.ns.Main)
	switch op.Resource {
	case "widgets":
		res = w.client.Resource(widgets).Namespace(w.ns.Widgets)
	case "gadgets":
		res = w.client.Resource(gadgets).Namespace(w.ns.Widgets)
	}
	var (
		obj  *unstructured.Unstructured
		err  error
		path string
	)
	patch := func(p map[string]any, sub ...string) (*unstructured.Unstructured, error) {
		// A patch that changes nothing answers with the object as it is,
		// whose resourceVersion may be one of kreact's own writes: it is
		// no write of the checker's, and is not made.
		cur, err := res.Get(ctx, op.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if holds(cur.Object, p) {
			return nil, nil
		}
		data, _ := json.Marshal(p)
		return res.Patch(ctx, op.Name, types.MergePatchType, data, metav1.PatchOptions{}, sub...)
	}
	switch op.Kind {
	case Create:
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": op.Name, "labels": map[string]any{"l": "a"}}}}
		if op.Resource != "configmaps" {
			u.SetAPIVersion("chaos.kreact.dev/v1")
			u.SetKind(map[string]string{"widgets": "Widget", "gadgets": "Gadget"}[op.Resource])
			u.Object["spec"] = map[string]any{"ready": op.Value == "true", "n": int64(0)}
		} else {
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			u.Object["data"] = map[string]any{"v": "0"}
		}
		obj, err = res.Create(ctx, u, metav1.CreateOptions{})
	case SetData:
		if op.Resource != "configmaps" {
			path = "spec"
			obj, err = patch(map[string]any{"spec": map[string]any{"n": op.Value}})
		} else {
			path = "data"
			obj, err = patch(map[string]any{"data": map[string]any{"v": op.Value}})
		}
	case SetLabel:
		path = "metadata.labels"
		obj, err = patch(map[string]any{"metadata": map[string]any{"labels": map[string]any{"l": op.Value}}})
	case Annotate:
		path = "metadata.annotations"
		obj, err = patch(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"chaos/ignored": op.Value}}})
	case SetReady:
		path = "spec"
		obj, err = patch(map[string]any{"spec": map[string]any{"ready": op.Value == "true"}})
	case SetState:
		path = "status"
		obj, err = patch(map[string]any{"status": map[string]any{"note": op.Value}}, "status")
	case Delete:
		cur, gerr := res.Get(ctx, op.Name, metav1.GetOptions{})
		if gerr != nil || cur.GetDeletionTimestamp() != nil {
			return ignoreMissing(gerr)
		}
		uid := cur.GetUID()
		err = res.Delete(ctx, op.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err == nil {
			var held []string
			for _, rule := range finalizerProbes {
				if slices.Contains(cur.GetFinalizers(), "kreact.dev/"+rule) {
					held = append(held, rule)
				}
			}
			w.h.Writes = append(w.h.Writes, Write{Kind: Delete, Resource: op.Resource, Name: op.Name, UID: string(uid), Held: held, At: time.Now()})
		}
		return ignoreMissing(err)
	default:
		return fmt.Errorf("unknown operation %q", op.Kind)
	}
	if err != nil || obj == nil {
		return ignoreMissing(err)
	}
	rv := rv(obj.GetResourceVersion())
	// A write that changed nothing gets no new resourceVersion.
	if i := slices.IndexFunc(w.h.Writes, func(x Write) bool { return x.UID == string(obj.GetUID()) && x.RV == rv }); i >= 0 {
		return nil
	}
	w.h.Writes = append(w.h.Writes, Write{Kind: op.Kind, Resource: op.Resource, Name: op.Name, UID: string(obj.GetUID()),
		RV: rv, Path: path, Value: op.Value, At: time.Now()})
	return nil
}

// holds reports whether obj already has every value of merge patch p.
func holds(obj, p map[string]any) bool {
	for k, v := range p {
		sub, isMap := v.(map[string]any)
		cur, ok := obj[k]
		switch {
		case isMap:
			m, _ := cur.(map[string]any)
			if !holds(m, sub) {
				return false
			}
		case !ok || fmt.Sprint(cur) != fmt.Sprint(v):
			return false
		}
	}
	return true
}

// ignoreMissing drops what an operation on a missing object, or one
// that exists already, or is being deleted, answers: the operations are
// drawn without looking at the state.
func ignoreMissing(err error) error {
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// settle mends every fault (replicas started, the rules mended) and
// waits until kreact is quiet: no ConfigMap held by the finalizer, and
// no probe line for a while, then reads the final state.
func (w *world) settle(ctx context.Context) error {
	if err := w.mend(); err != nil {
		return err
	}
	want := 1
	if w.cfg.Faults.Shards {
		want = 2
	}
	for i, s := range w.slots {
		if s.cmd == nil && (i < want || !s.startAt.IsZero()) {
			if err := w.start(i); err != nil {
				return err
			}
		}
		if s.fault >= 0 {
			// A replica that stays away left the group when it stopped.
			w.h.Faults[s.fault].To = w.h.Faults[s.fault].From
			s.fault = -1
		}
	}
	deadline := time.Now().Add(3 * time.Minute)
	quietSince, lines := time.Now(), w.probeLines()
	for {
		sleep(ctx, time.Second)
		if err := ctx.Err(); err != nil {
			return err
		}
		if n := w.probeLines(); n != lines {
			quietSince, lines = time.Now(), n
		}
		held, err := w.held(ctx)
		if err != nil {
			return err
		}
		// p-tick writes a line every 2s: quiet is no other line for
		// 10s, longer than a timer (2s) and the backoff of a watch or an
		// action after an outage (1s), on a loaded machine.
		if (held == 0 && time.Since(quietSince) > 10*time.Second) || time.Now().After(deadline) {
			break
		}
	}
	if err := w.readFinal(ctx); err != nil {
		return err
	}
	w.h.End = time.Now()
	sleep(ctx, 3*time.Second)
	w.h.Final.Generations = map[string]int64{}
	for _, gvr := range []schema.GroupVersionResource{widgets, gadgets} {
		list, err := w.client.Resource(gvr).Namespace(w.ns.Widgets).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, o := range list.Items {
			w.h.Final.Generations[string(o.GetUID())] = o.GetGeneration()
		}
	}
	return nil
}

// probeLines counts the probe lines of every process but p-tick's.
func (w *world) probeLines() int {
	n := 0
	for i, p := range w.h.Procs {
		calls, _ := readCalls(p.Log, i)
		for _, c := range calls {
			if c.Rule != "p-tick" {
				n++
			}
		}
	}
	return n
}

// held counts the ConfigMaps that wait on a finalizer.
func (w *world) held(ctx context.Context) (int, error) {
	list, err := w.client.Resource(configMaps).Namespace(w.ns.Main).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range list.Items {
		if o.GetDeletionTimestamp() != nil {
			n++
		}
	}
	return n, nil
}

// readFinal reads the final state.
func (w *world) readFinal(ctx context.Context) error {
	read := func(gvr schema.GroupVersionResource, ns string) ([]Object, error) {
		list, err := w.client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []Object
		for _, u := range list.Items {
			out = append(out, objectOf(u))
		}
		return out, nil
	}
	var err error
	f := &w.h.Final
	for _, r := range []struct {
		to  *[]Object
		gvr schema.GroupVersionResource
		ns  string
	}{{&f.ConfigMaps, configMaps, w.ns.Main}, {&f.Widgets, widgets, w.ns.Widgets}, {&f.Gadgets, gadgets, w.ns.Widgets}, {&f.Owned, configMaps, w.ns.Widgets},
		{&f.Copies, configMaps, w.ns.Copies}, {&f.Forbidden, configMaps, w.ns.Forbidden}} {
		if *r.to, err = read(r.gvr, r.ns); err != nil {
			return err
		}
	}
	return nil
}

func objectOf(u unstructured.Unstructured) Object {
	o := Object{Kind: u.GetKind(), Name: u.GetName(), UID: string(u.GetUID()), RV: rv(u.GetResourceVersion()), Generation: u.GetGeneration(),
		Terminating: u.GetDeletionTimestamp() != nil, Labels: u.GetLabels(), Annotations: u.GetAnnotations(), Finalizers: u.GetFinalizers()}
	o.Data, _, _ = unstructured.NestedStringMap(u.Object, "data")
	if ready, ok, _ := unstructured.NestedBool(u.Object, "spec", "ready"); ok {
		o.Ready = fmt.Sprint(ready)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		cond := Condition{Type: fmt.Sprint(m["type"]), Status: fmt.Sprint(m["status"])}
		cond.ObservedGeneration, _, _ = unstructured.NestedInt64(m, "observedGeneration")
		if s, ok := m["lastTransitionTime"].(string); ok {
			cond.LastTransitionTime, _ = time.Parse(time.RFC3339, s)
		}
		o.Conditions = append(o.Conditions, cond)
	}
	for _, r := range u.GetOwnerReferences() {
		o.Owners = append(o.Owners, Owner{UID: string(r.UID), Controller: r.Controller != nil && *r.Controller})
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

var errViolations = errors.New("violations")
