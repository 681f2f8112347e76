package tail

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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/restmapper"
)

// Refs returns the resources named by command-line arguments: each may
// list several, separated by commas, and "apps/v1 Deployment", given as
// two arguments, is one (JoinKindRefs).
func Refs(args []string) []string {
	var refs []string
	for _, a := range args {
		for _, r := range strings.Split(a, ",") {
			if r = strings.TrimSpace(r); r != "" {
				refs = append(refs, r)
			}
		}
	}
	return JoinKindRefs(refs)
}

// JoinKindRefs turns ["apps/v1", "Deployment"] into ["apps/v1 Deployment"].
func JoinKindRefs(refs []string) []string {
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

// Options configure a Tail. The zero value watches all namespaces,
// without selectors, and prints lines to io.Discard.
type Options struct {
	// Namespace limits namespaced resources to one namespace; empty means
	// all.
	Namespace string
	// LabelSelector and FieldSelector are sent to the API server.
	LabelSelector, FieldSelector string
	// Format is "" (one line per event), "wide", "json" or "yaml".
	Format string
	// Out receives the records. Nil means io.Discard.
	Out io.Writer
	// Logger receives progress and waiting resources. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Tail prints the events of the resources it watches.
type Tail struct {
	mapper    *restmapper.Mapper
	informers *dynamicinformer.Manager
	source    discovery.Source
	opts      Options
	printer   *printer

	mu      sync.Mutex
	watches []*dynamicinformer.Watch
	started map[string]bool // by GVR string, so "cm,configmaps" watches once
	waiting []string
}

// New returns a Tail over a watch stack: its mapper, informer manager and
// discovery source (which tells when a waited-for resource appears).
func New(mapper *restmapper.Mapper, informers *dynamicinformer.Manager, source discovery.Source, opts Options) *Tail {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Tail{
		mapper: mapper, informers: informers, source: source, opts: opts,
		printer: &printer{out: opts.Out, format: opts.Format, mapper: mapper},
		started: map[string]bool{},
	}
}

// Watch starts watching refs, named as kubectl names resources. A resource
// that is not served (yet) waits, and is watched once discovery serves it;
// any other error, such as a misspelt name, is returned, all at once.
func (t *Tail) Watch(refs []string) error {
	var invalid []error
	for _, ref := range refs {
		if err := t.start(ref); err != nil {
			var nf *restmapper.NotFoundError
			if !errors.As(err, &nf) {
				invalid = append(invalid, err)
				continue
			}
			t.opts.Logger.Warn("resource not served (yet); waiting for it to appear", "resource", ref, "error", err)
			t.mu.Lock()
			t.waiting = append(t.waiting, ref)
			t.mu.Unlock()
		}
	}
	return errors.Join(invalid...)
}

// Start prints events until ctx ends, watching waiting resources as they
// appear and logging the initial sync's progress when it takes more than
// a moment; it stops every watch before it returns.
func (t *Tail) Start(ctx context.Context) error {
	unsubscribe := t.source.Subscribe(func(d discovery.Diff) {
		if len(d.Added) > 0 {
			t.retryWaiting()
		}
	})
	defer unsubscribe()
	defer t.stopAll()
	// A resource served between Watch and the subscription.
	t.retryWaiting()
	t.reportSync(ctx)
	<-ctx.Done()
	return nil
}

func (t *Tail) start(ref string) error {
	res, err := t.mapper.Resolve(ref)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started[res.GVR.String()] {
		return nil
	}
	ns := t.opts.Namespace
	if !res.Namespaced {
		ns = ""
	}
	key := dynamicinformer.Key{GVR: res.GVR, Namespace: ns, LabelSelector: t.opts.LabelSelector, FieldSelector: t.opts.FieldSelector}
	watch, err := t.informers.Watch(key, "kreact-watch", t.printer.handler(res))
	if err != nil {
		return fmt.Errorf("watch %s: %w", ref, err)
	}
	t.started[res.GVR.String()] = true
	t.watches = append(t.watches, watch)
	return nil
}

func (t *Tail) retryWaiting() {
	t.mu.Lock()
	waiting := t.waiting
	t.waiting = nil
	t.mu.Unlock()
	for _, ref := range waiting {
		if err := t.start(ref); err != nil {
			t.mu.Lock()
			t.waiting = append(t.waiting, ref)
			t.mu.Unlock()
			continue
		}
		t.opts.Logger.Info("resource appeared; watching it", "resource", ref)
	}
}

func (t *Tail) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, watch := range t.watches {
		watch.Stop()
	}
}

// reportSync logs initial-sync progress while it takes more than a
// moment, until every informer has synced or ctx ends.
func (t *Tail) reportSync(ctx context.Context) {
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
		for _, s := range t.informers.Status() {
			if !s.Synced {
				listing = append(listing, s)
			}
		}
		if len(listing) == 0 {
			return
		}
		progress, _ := dynamicinformer.Describe(listing)
		t.opts.Logger.Info("initial sync in progress", "elapsed", time.Since(start).Round(time.Second).String(), "informers", progress)
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
			cache.MetaObjectToName(u).String(), u.GetResourceVersion(), u.GetUID(), u.GetGeneration(), labels.Set(u.GetLabels()))
	default:
		fmt.Fprintf(p.out, "%s  %-8s  %s  %s  %s\n", now.Format("15:04:05.000"), event, resource, cache.MetaObjectToName(u).String(), u.GetResourceVersion())
	}
}
