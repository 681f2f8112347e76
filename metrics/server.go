package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ServerOptions configure Listen. With both addresses, the metrics
// address serves everything (/metrics, the probes and, with Pprof,
// /debug/pprof/) and the health address serves /healthz and /readyz only;
// with one address (or the same one twice), it serves everything; with
// none, nothing is served.
type ServerOptions struct {
	// MetricsAddr and HealthAddr are host:port addresses; empty means none.
	MetricsAddr, HealthAddr string
	// Pprof serves /debug/pprof/ where /metrics is served.
	Pprof bool
	// Ready is /readyz's check (HandlerOptions.Ready).
	Ready func() error
	// Logger receives the servers' logs. Nil means slog.Default().
	Logger *slog.Logger
	// ShutdownGrace bounds how long requests in flight may finish once
	// Start's context ends. Zero means 5s.
	ShutdownGrace time.Duration
	// ExplainAddr, if not empty, is where Explain is served, alone. It
	// must be a loopback address (127.0.0.1:PORT, [::1]:PORT,
	// localhost:PORT; else ErrExplainNotLoopback): what kreact explain
	// answers names objects, labels and script errors, so it is not
	// served to anything outside the Pod, whatever the network policy.
	ExplainAddr string
	// Explain is the handler of ExplainAddr (explain.Handler).
	Explain http.Handler
}

// Server serves the endpoints of ServerOptions on listeners already bound.
type Server struct {
	opts    ServerOptions
	servers []*http.Server
	lns     []net.Listener
	paths   []string // what each server serves, for the log
}

// ErrPprofWithoutAddress is Listen's error for Pprof with no address.
var ErrPprofWithoutAddress = errors.New("pprof needs an address to be served on")

// ErrExplainNotLoopback is Listen's error for an ExplainAddr that is not
// a loopback address.
var ErrExplainNotLoopback = errors.New("the explain address must be a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT)")

// loopback reports whether addr (host:port) names a loopback host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen binds the addresses at once, so that a busy port is an error at
// startup; an address that cannot be bound is an error, and then nothing
// is left listening. Start then serves.
func Listen(ctx context.Context, rec *Recorder, opts ServerOptions) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 5 * time.Second
	}
	type endpoint struct {
		addr, role, paths string
		handler           http.Handler
	}
	if opts.ExplainAddr != "" && !loopback(opts.ExplainAddr) {
		return nil, fmt.Errorf("%w: %s", ErrExplainNotLoopback, opts.ExplainAddr)
	}
	var eps []endpoint
	all := Handler(rec, HandlerOptions{Ready: opts.Ready, Pprof: opts.Pprof})
	switch m, h := opts.MetricsAddr, opts.HealthAddr; {
	case m == "" && h == "":
		if opts.Pprof {
			return nil, ErrPprofWithoutAddress
		}
	case m != "" && h != "" && m != h:
		eps = append(eps, endpoint{m, "metrics", paths(true, opts.Pprof), all}, endpoint{h, "health probe", paths(false, false), Handler(nil, HandlerOptions{Ready: opts.Ready})})
	case m != "":
		eps = append(eps, endpoint{m, "metrics", paths(true, opts.Pprof), all})
	default:
		eps = append(eps, endpoint{h, "health probe", paths(true, opts.Pprof), all})
	}
	if opts.ExplainAddr != "" && opts.Explain != nil {
		eps = append(eps, endpoint{opts.ExplainAddr, "explain", "/explain", opts.Explain})
	}
	s := &Server{opts: opts}
	for _, ep := range eps {
		s.paths = append(s.paths, ep.paths)
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", ep.addr)
		if err != nil {
			for _, l := range s.lns {
				_ = l.Close()
			}
			return nil, fmt.Errorf("%s address: %w", ep.role, err)
		}
		s.lns = append(s.lns, ln)
		s.servers = append(s.servers, &http.Server{
			Handler:           ep.handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		})
	}
	return s, nil
}

// Start serves until ctx ends, then shuts the servers down, letting
// requests in flight finish within the grace period, and returns when they
// have stopped. A server that fails stops the others, and its error is
// returned.
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(s.servers))
	for i, srv := range s.servers {
		ln := s.lns[i]
		s.opts.Logger.Info("serving", "address", ln.Addr().String(), "paths", s.paths[i])
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs[i] = fmt.Errorf("serve %s: %w", ln.Addr(), err)
				cancel()
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownGrace)
			defer stop()
			_ = srv.Shutdown(sctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// paths lists what a server serves, for the log: the first serves
// everything.
func paths(first, pprof bool) string {
	p := []string{"/healthz", "/readyz"}
	if first {
		p = append([]string{"/metrics"}, p...)
		if pprof {
			p = append(p, "/debug/pprof/")
		}
	}
	return strings.Join(p, ",")
}
