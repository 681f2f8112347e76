package admission

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// Addr is the address the webhook server listens on, e.g. ":9443".
	// Required.
	Addr string
	// Certificates returns the server's certificate (from files, or
	// generated), once, when the server first listens: a rule set without
	// admission handlers generates nothing. Required.
	Certificates func(ctx context.Context) (*Certificates, error)
	// Config says where the API server reaches the server; its CABundle,
	// when empty, is the generated CA's.
	Config Options
	// Applier, if set, applies the webhook configurations of the rules
	// loaded, and deletes them when no rule has admission handlers; nil
	// leaves them to the user (kreact webhooks).
	Applier Applier
	// Mapper resolves the rules' resources. Required.
	Mapper apiresource.Resolver
	// Informers serves the reads of spec.reads; nil makes them fail.
	Informers dynamicinformer.Watcher
	// Observer, if set, is told about every request answered.
	Observer Observer
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the scripts' clock; nil means time.Now.
	Now func() time.Time
	// RuleObjects, if set, checks the rule objects (Rule, ClusterRule)
	// that the API server sends to RuleObjectsPath: the server then
	// listens from the start, rules with admission handlers or not, and
	// applies the RuleObjectsConfiguration with Applier. nil leaves rule
	// objects to the CRDs' schema.
	RuleObjects RuleObjectChecker
}

// Server answers the API server's admission reviews with the admission
// handlers (onValidate, onMutate) of the rules it loaded, over HTTPS. It
// is a lifecycle.Runnable, and a engine.Loader: Load sets the rules, from
// any goroutine, as often as they change.
//
// It listens only once a rule with admission handlers is loaded, or from
// the start with ServerOptions.RuleObjects: a rule set without any costs
// nothing, and leaves the cluster's webhook configurations alone. Every replica serves, leader or not: the API
// server calls any of them through the Service.
type Server struct {
	opts ServerOptions
	log  *slog.Logger

	// loading orders the calls of Load, and guards noHandlers: the
	// fingerprints of the last load's rules that have no admission
	// handler, which the next load need not compile again.
	loading    sync.Mutex
	noHandlers map[string]bool

	mu       sync.RWMutex
	handlers map[string]*handler
	// listener is set once the server listens; listening is closed then.
	// certs is the certificate it serves, and config the configurations'
	// options with its CA bundle.
	listener  net.Listener
	listening chan struct{}
	certs     *Certificates
	config    Options
	// stopped is set when Start has returned: the server listens no more.
	stopped bool
	// applied is true once configurations were applied, so that a rule
	// set without admission handlers removes them.
	applied bool
}

// NewServer returns a server that listens once rules with admission
// handlers are loaded.
func NewServer(opts ServerOptions) (*Server, error) {
	switch {
	case opts.Addr == "":
		return nil, errors.New("admission: no address to listen on")
	case opts.Certificates == nil:
		return nil, errors.New("admission: no certificates")
	case opts.Mapper == nil:
		return nil, errors.New("admission: no mapper")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{
		opts:      opts,
		log:       opts.Logger.With("component", "admission"),
		handlers:  map[string]*handler{},
		listening: make(chan struct{}),
	}, nil
}

// Load serves the admission handlers of rs from now on, keeping those of
// the rules whose file is among keepSources (files that failed to load),
// and applies the webhook configurations that send requests to them. A
// rule with admission handlers that does not resolve or pass Check is not
// served, and its errors are returned, joined, each naming the rule
// (diag.Position.Rule); the others are served all the same. A script
// that does not compile is skipped without an error: the engine reports
// it. Configurations that could not be applied are a NotAppliedError.
func (s *Server) Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error {
	s.loading.Lock()
	defer s.loading.Unlock()
	var errs []error
	s.mu.RLock()
	old := s.handlers
	s.mu.RUnlock()
	next := map[string]*handler{}
	for _, h := range old {
		for _, src := range keepSources {
			if h.rule.Source == src {
				next[h.rule.Name] = h
			}
		}
	}
	var built []*handler
	noHandlers := map[string]bool{}
	for _, r := range rs {
		fp := r.Fingerprint()
		if cur := old[r.Name]; cur != nil && cur.fingerprint == fp {
			next[r.Name] = cur // unchanged: compiled and checked when built
			continue
		}
		if s.noHandlers[fp] {
			noHandlers[fp] = true
			continue // compiled before: no admission handler
		}
		prog, problems := scripting.CheckScript(r)
		if problems.Errors().Err() != nil {
			// Whether it has admission handlers is unknown; the
			// engine, which compiles every rule, reports it.
			continue
		}
		h := HandlersOf(prog)
		if !h.Any() {
			noHandlers[fp] = true
			continue
		}
		res, err := r.Resolve(s.opts.Mapper)
		if err != nil {
			errs = append(errs, r.Errors(err))
			continue
		}
		if err := Check(res, prog, s.opts.Config).Errors().Err(); err != nil {
			errs = append(errs, err)
			continue
		}
		hd, err := newHandler(Rule{Resolved: res, Handlers: h}, prog, fp, s.opts.Mapper, s.opts.Informers, s.log, s.opts.Now)
		if err != nil {
			errs = append(errs, r.Errors(err))
			continue
		}
		built = append(built, hd)
		next[r.Name] = hd
	}
	if len(next) > 0 {
		if err := s.listen(ctx); err != nil {
			for _, h := range built {
				h.close()
			}
			return errors.Join(append(errs, err)...)
		}
	}
	s.mu.Lock()
	s.handlers = next
	s.mu.Unlock()
	// Only the rules of this load: a set that keeps changing (rule
	// objects) does not grow it.
	s.noHandlers = noHandlers
	for name, h := range old {
		if next[name] != h {
			h.close()
		}
	}
	if err := s.apply(ctx, next); err != nil {
		errs = append(errs, err)
	}
	for _, h := range built {
		s.log.Info("serving admission", "rule", h.rule.Name, "validate", h.handlers.Validate, "mutate", h.handlers.Mutate, "mode", h.rule.Admission.Mode)
		for _, w := range Warnings(h.rule) {
			s.log.Warn(w.Msg, "rule", h.rule.Name, "at", w.Pos.String())
		}
	}
	return errors.Join(errs...)
}

// LogLoad logs each problem of a load of the server (Server.Load) as
// what it is: a rule not served (with the rule's name), configurations not
// applied, or no rule served (no certificate, no address); nothing for a
// load without problems.
func LogLoad(logger *slog.Logger, err error) {
	for _, p := range diag.Problems(err) {
		var e *diag.Error
		switch {
		case errors.As(p, &e) && e.Pos.Rule != "":
			logger.Error("admission: rule not served", "rule", e.Pos.Rule, "error", p.Error())
		case errors.As(p, new(*NotAppliedError)):
			logger.Error("admission: webhook configurations not applied", "error", p.Error())
		default:
			logger.Error("admission: rules not served", "error", p.Error())
		}
	}
}

// NotAppliedError is Server.Load's error when the webhook configurations
// could not be applied, or deleted: the rules are served, but the API
// server sends its requests as the configurations it has say.
type NotAppliedError struct{ Err error }

func (e *NotAppliedError) Error() string { return e.Err.Error() }
func (e *NotAppliedError) Unwrap() error { return e.Err }

// apply applies the configurations of the rules served, and deletes them
// once none has admission handlers.
func (s *Server) apply(ctx context.Context, hs map[string]*handler) error {
	if s.opts.Applier == nil {
		return nil
	}
	if len(hs) == 0 {
		if !s.applied {
			return nil
		}
		if err := s.opts.Applier.Delete(ctx, s.name()); err != nil {
			return &NotAppliedError{fmt.Errorf("admission: remove webhook configurations: %w", err)}
		}
		s.applied = false
		return nil
	}
	var rs []Rule
	for _, h := range sortedHandlers(hs) {
		rs = append(rs, Rule{Resolved: h.resolved, Handlers: h.handlers})
	}
	s.mu.RLock()
	config := s.config
	s.mu.RUnlock()
	v, m := Configurations(rs, config)
	if err := s.opts.Applier.Apply(ctx, v, m); err != nil {
		return &NotAppliedError{fmt.Errorf("admission: apply webhook configurations: %w", err)}
	}
	s.applied = true
	return nil
}

func (s *Server) name() string {
	if s.opts.Config.Name == "" {
		return "kreact"
	}
	return s.opts.Config.Name
}

// listen gets the certificate and binds the address, once. It runs under
// s.loading, so s.mu is held only to publish the listener: the
// certificate may take a request to the API server (SharedCA).
func (s *Server) listen(ctx context.Context) error {
	s.mu.RLock()
	done := s.listener != nil
	s.mu.RUnlock()
	if done {
		return nil
	}
	certs, err := s.opts.Certificates(ctx)
	if err != nil {
		return fmt.Errorf("admission: certificate: %w", err)
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("admission: listen: %w", err)
	}
	config := s.opts.Config
	if len(config.CABundle) == 0 && config.InjectCAFrom == "" {
		config.CABundle = certs.CABundle()
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		_ = ln.Close()
		return errors.New("admission: the server has stopped")
	}
	s.listener, s.certs, s.config = ln, certs, config
	close(s.listening)
	s.mu.Unlock()
	s.log.Info("admission webhook server listening", "address", ln.Addr().String())
	return nil
}

// Addr returns the address the server listens on, or nil before it
// listens.
func (s *Server) Addr() net.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// Synced reports whether the caches that the admission handlers read
// have their initial list (true when there are none).
func (s *Server) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, h := range s.handlers {
		if !h.synced() {
			return false
		}
	}
	return true
}

// ErrNotSynced is Ready's error while the caches that the admission
// handlers read are not synced.
var ErrNotSynced = errors.New("the caches that admission handlers read are not synced")

// Ready is Synced as a readiness check (/readyz) says it: nil once the
// caches are synced, else ErrNotSynced. A nil Server, a replica without
// admission, is ready.
func (s *Server) Ready() error {
	if s != nil && !s.Synced() {
		return ErrNotSynced
	}
	return nil
}

// Start serves, once the server listens, until ctx ends; then it stops
// the rules' handlers. The webhook configurations stay: with the default
// failure policy, Ignore, the API server lets requests through while
// kreact is away, and a rule that asks for Fail asked for that.
func (s *Server) Start(ctx context.Context) error {
	defer s.stop()
	if s.opts.RuleObjects != nil {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { s.serveRuleObjects(ctx) })
	}
	select {
	case <-ctx.Done():
		return nil
	case <-s.listening:
	}
	s.mu.RLock()
	ln, certs := s.listener, s.certs
	s.mu.RUnlock()
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("admission: serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	<-errc
	return nil
}

// serveRuleObjects makes the server listen and applies the
// RuleObjectsConfiguration, trying again, less and less often, until it
// could or ctx ends: a certificate from the API server (SharedCA) or the
// configuration's apply may fail for a while, and kreact runs its rules
// meanwhile. It runs beside Start, which serves once the server listens.
func (s *Server) serveRuleObjects(ctx context.Context) {
	delay := time.Second
	for {
		err := s.listenForRuleObjects(ctx)
		if err == nil {
			return
		}
		s.log.Error("admission: rule objects are not checked at apply", "error", err, "retryIn", delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
}

func (s *Server) listenForRuleObjects(ctx context.Context) error {
	s.loading.Lock()
	defer s.loading.Unlock()
	if err := s.listen(ctx); err != nil {
		return err
	}
	if s.opts.Applier == nil {
		return nil
	}
	s.mu.RLock()
	config := s.config
	s.mu.RUnlock()
	if err := s.opts.Applier.Apply(ctx, RuleObjectsConfiguration(config), nil); err != nil {
		return fmt.Errorf("admission: apply the webhook configuration of rule objects: %w", err)
	}
	s.log.Info("admission: checking rule objects at apply", "configuration", RuleObjectsConfiguration(config).Name)
	return nil
}

// stop closes the rules' handlers and the listener (which Shutdown
// closed already when the server served).
func (s *Server) stop() {
	s.loading.Lock()
	defer s.loading.Unlock()
	s.mu.Lock()
	s.stopped = true
	hs := s.handlers
	s.handlers = map[string]*handler{}
	if s.listener != nil {
		_ = s.listener.Close()
	}
	s.mu.Unlock()
	for _, h := range hs {
		h.close()
	}
}

// maxReviewSize bounds a request body: an AdmissionReview holds the
// object twice, and the API server stores objects of at most 1.5 MiB.
const maxReviewSize = 8 << 20

// ServeHTTP answers an AdmissionReview posted to ValidatePath+RULE,
// MutatePath+RULE or RuleObjectsPath.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var t event.Type
	var rule string
	switch {
	case r.URL.Path == RuleObjectsPath:
	case strings.HasPrefix(r.URL.Path, ValidatePath):
		t, rule = event.Validate, strings.TrimPrefix(r.URL.Path, ValidatePath)
	case strings.HasPrefix(r.URL.Path, MutatePath):
		t, rule = event.Mutate, strings.TrimPrefix(r.URL.Path, MutatePath)
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewSize+1))
	if err != nil || len(body) > maxReviewSize {
		http.Error(w, "cannot read the AdmissionReview", http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	if gv := review.GroupVersionKind().GroupVersion(); gv != admissionv1.SchemeGroupVersion {
		http.Error(w, fmt.Sprintf("AdmissionReview %s: only %s is served", gv, admissionv1.SchemeGroupVersion), http.StatusBadRequest)
		return
	}
	var resp *admissionv1.AdmissionResponse
	if r.URL.Path == RuleObjectsPath {
		resp = s.ReviewRuleObject(r.Context(), review.Request)
	} else {
		resp = s.Review(r.Context(), t, rule, review.Request)
	}
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&out)
}

// Review answers an admission request for rule's handler of t (Validate
// or Mutate). A rule that is not served (it went since the API server
// read its configuration) allows the request.
func (s *Server) Review(ctx context.Context, t event.Type, rule string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	s.mu.RLock()
	h := s.handlers[rule]
	s.mu.RUnlock()
	if h == nil || (t == event.Validate && !h.handlers.Validate) || (t == event.Mutate && !h.handlers.Mutate) {
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	}
	start := time.Now()
	resp, result, err := h.review(ctx, t, req)
	d := time.Since(start)
	if s.opts.Observer != nil {
		s.opts.Observer.Admitted(rule, string(req.Operation), result, d)
	}
	attrs := []any{"rule", rule, "handler", t.Handler(), "operation", req.Operation, "resource", schemaGVR(req.Resource).GroupResource().String(),
		"namespace", req.Namespace, "name", req.Name, "result", result}
	switch result {
	case event.AdmissionFailed:
		s.log.Error("admission handler failed", append(attrs, "allowed", resp.Allowed, "error", err)...)
	case event.WouldDeny, event.WouldPatch, event.Denied:
		s.log.Info("admission", append(attrs, "message", warningOrMessage(resp))...)
	}
	return resp
}

func warningOrMessage(resp *admissionv1.AdmissionResponse) string {
	if resp.Result != nil {
		return resp.Result.Message
	}
	return strings.Join(resp.Warnings, "; ")
}

func schemaGVR(r metav1.GroupVersionResource) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}
