package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/restmapper"
)

type watchFlags struct {
	namespace     string
	allNamespaces bool
	labelSelector string
	fieldSelector string
	output        string
	cluster       clusterFlags
	log           logFlags
}

func watchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f watchFlags
	fs := newFlagSet("watch", "kreact watch RESOURCE[,RESOURCE...] [-n NS | -A] [-l SELECTOR] [--field-selector F] [-o wide|json|yaml]",
		`Print one line per add, update and delete of the given resources until Ctrl-C.
Resources are named as kubectl names them: deploy, deployments.apps,
apps/v1 Deployment, a CRD's plural or short name. A resource that does not
exist yet (a CRD not installed) is reported as waiting and watched as soon
as it appears; a deleted CRD's watch stops and resumes when it comes back.
Selectors are sent to the API server.`)
	fs.stringVar(&f.namespace, "namespace", "n", "", "namespace to watch (default: the context's namespace)")
	fs.boolVar(&f.allNamespaces, "all-namespaces", "A", false, "watch all namespaces")
	fs.stringVar(&f.labelSelector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.stringVar(&f.fieldSelector, "field-selector", "", "", "field selector, e.g. metadata.name=x")
	fs.stringVar(&f.output, "output", "o", "", "output format: (default) lines, wide, json or yaml")
	f.cluster.register(fs)
	f.log.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{"watch: name at least one resource, e.g. `kreact watch deploy,cm -A`"}
	}
	var refs []string
	for _, a := range fs.Args() {
		for _, r := range strings.Split(a, ",") {
			if r = strings.TrimSpace(r); r != "" {
				refs = append(refs, r)
			}
		}
	}
	// "apps/v1 Deployment" arrives as two arguments; join a group/version
	// with the kind that follows it.
	refs = joinKindRefs(refs)
	switch f.output {
	case "", "wide", "json", "yaml":
	default:
		return &usageError{fmt.Sprintf("watch: -o %q: want wide, json or yaml", f.output)}
	}
	if _, err := labels.Parse(f.labelSelector); err != nil {
		return &invalidError{fmt.Errorf("-l %q: %w", f.labelSelector, err)}
	}
	if _, err := fields.ParseSelector(f.fieldSelector); err != nil {
		return &invalidError{fmt.Errorf("--field-selector %q: %w", f.fieldSelector, err)}
	}
	logger, err := f.log.logger(stderr)
	if err != nil {
		return err
	}
	cfg, contextNS, err := f.cluster.load()
	if err != nil {
		return err
	}
	namespace := f.namespace
	if namespace == "" {
		namespace = contextNS
	}
	if f.allNamespaces {
		namespace = ""
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stack, err := kube.Start(ctx, cfg, kube.Options{Logger: logger})
	if err != nil {
		return &clusterError{err}
	}
	p := &printer{out: stdout, format: f.output, mapper: stack.Mapper}
	w := &watcher{stack: stack, logger: logger, printer: p, namespace: namespace, labels: f.labelSelector, fields: f.fieldSelector, started: map[string]bool{}}
	var invalid []error
	for _, ref := range refs {
		if err := w.start(ref); err != nil {
			var nf *restmapper.NotFoundError
			if !errors.As(err, &nf) {
				invalid = append(invalid, err)
				continue
			}
			logger.Warn("resource not served (yet); waiting for it to appear", "resource", ref, "error", err)
			w.waiting = append(w.waiting, ref)
		}
	}
	if len(invalid) > 0 {
		cancel()
		_ = stack.Wait()
		return &invalidError{errors.Join(invalid...)}
	}
	unsubscribe := stack.Discovery.Subscribe(func(d discovery.Diff) {
		if len(d.Added) > 0 {
			w.retryWaiting()
		}
	})
	go reportSync(ctx, logger, stack)
	<-ctx.Done()
	unsubscribe()
	w.stopAll()
	return stack.Wait()
}

// joinKindRefs turns ["apps/v1", "Deployment"] into ["apps/v1 Deployment"].
func joinKindRefs(refs []string) []string {
	var out []string
	for i := 0; i < len(refs); i++ {
		if strings.Contains(refs[i], "/") && i+1 < len(refs) && !strings.Contains(refs[i+1], "/") && refs[i+1] != strings.ToLower(refs[i+1]) {
			out = append(out, refs[i]+" "+refs[i+1])
			i++
			continue
		}
		out = append(out, refs[i])
	}
	return out
}

// watcher owns the watches of one `kreact watch`.
type watcher struct {
	stack                     *kube.Stack
	logger                    *slog.Logger
	printer                   *printer
	namespace, labels, fields string

	mu      sync.Mutex
	watches []*dynamicinformer.Watch
	started map[string]bool // by GVR string, so "cm,configmaps" watches once
	waiting []string
}

func (w *watcher) start(ref string) error {
	res, err := w.stack.Mapper.Resolve(ref)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started[res.GVR.String()] {
		return nil
	}
	ns := w.namespace
	if !res.Namespaced {
		ns = ""
	}
	key := dynamicinformer.Key{GVR: res.GVR, Namespace: ns, LabelSelector: w.labels, FieldSelector: w.fields}
	watch, err := w.stack.Informers.Watch(key, "kreact-watch", w.printer.handler(res))
	if err != nil {
		return fmt.Errorf("watch %s: %w", ref, err)
	}
	w.started[res.GVR.String()] = true
	w.watches = append(w.watches, watch)
	return nil
}

func (w *watcher) retryWaiting() {
	w.mu.Lock()
	waiting := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	for _, ref := range waiting {
		if err := w.start(ref); err != nil {
			w.mu.Lock()
			w.waiting = append(w.waiting, ref)
			w.mu.Unlock()
			continue
		}
		w.logger.Info("resource appeared; watching it", "resource", ref)
	}
}

func (w *watcher) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, watch := range w.watches {
		watch.Stop()
	}
}

// reportSync logs initial-sync progress when it takes more than a moment.
func reportSync(ctx context.Context, logger *slog.Logger, stack *kube.Stack) {
	start := time.Now()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var listing []dynamicinformer.WatchStatus
		for _, s := range stack.Informers.Status() {
			if !s.Synced {
				listing = append(listing, s)
			}
		}
		if len(listing) == 0 {
			return
		}
		progress, _ := describeInformers(listing)
		logger.Info("initial sync in progress", "elapsed", time.Since(start).Round(time.Second).String(), "informers", progress)
	}
}

// printer writes one record per event. Handlers of different informers run
// concurrently, so writes are serialised.
type printer struct {
	mu     sync.Mutex
	out    io.Writer
	format string
	mapper *restmapper.Mapper
}

func (p *printer) handler(res apiresource.Resource) cache.ResourceEventHandler {
	name := p.mapper.Name(res)
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.print("ADDED", name, obj) },
		UpdateFunc: func(_, obj any) { p.print("MODIFIED", name, obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			p.print("DELETED", name, obj)
		},
	}
}

func (p *printer) print(event, resource string, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.format {
	case "json", "yaml":
		rec := map[string]any{"time": now.UTC().Format(time.RFC3339Nano), "type": event, "resource": resource, "object": u.Object}
		if p.format == "json" {
			data, _ := json.Marshal(rec)
			fmt.Fprintf(p.out, "%s\n", data)
			return
		}
		data, _ := yaml.Marshal(rec)
		fmt.Fprintf(p.out, "---\n%s", data)
	case "wide":
		fmt.Fprintf(p.out, "%s  %-8s  %s  %s  %s  uid=%s gen=%d labels=%s\n", now.Format("15:04:05.000"), event, resource,
			objectRef(u), u.GetResourceVersion(), u.GetUID(), u.GetGeneration(), labels.Set(u.GetLabels()))
	default:
		fmt.Fprintf(p.out, "%s  %-8s  %s  %s  %s\n", now.Format("15:04:05.000"), event, resource, objectRef(u), u.GetResourceVersion())
	}
}

func objectRef(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
