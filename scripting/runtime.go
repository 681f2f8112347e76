package scripting

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/governor"
)

// RuntimeOptions configures a Runtime.
type RuntimeOptions struct {
	// Rule names the rule in actions, errors, logs and ctx.rule. The zero
	// value leaves it empty.
	Rule string
	// Timeout bounds one handler call, and the script's top-level code when
	// the runtime is built. Zero means one second.
	Timeout time.Duration
	// MaxCallStackSize bounds the script's call depth; deeper recursion
	// fails the call with a stack overflow. Zero means 1024 frames.
	MaxCallStackSize int
	// MaxActions bounds the actions one call may ask for; the next one
	// throws, and the call returns none. Zero means 100.
	MaxActions int
	// DryRun marks every action the script asks for as a dry run.
	DryRun bool
	// MemoryLimit bounds, in bytes, the memory one call, or the top
	// level, may take: the pages its thread touches first, or, if it
	// took an eighth of that (and 4 MiB) itself, what the process
	// allocated while it ran. A call that takes more is stopped like a timeout.
	// Built-ins that would build a larger value in one step are refused
	// before they run. Zero means DefaultMemoryLimit. See the package
	// documentation for what is and is not guaranteed.
	MemoryLimit int64
	// CPULimit, if set, returns a CPU time after which a call is stopped,
	// like a timeout (event.ScriptError.CPULimit), where the operating system
	// tells (Linux); zero for none. It is called at every reading of the
	// memory watchdog, so it must be cheap, and a call may overrun the
	// limit by a few milliseconds. kreact run sets it so that a call that
	// computes at length moves its rule to a process of its own (package
	// isolation), which runs it without, for as long as rules can move.
	CPULimit func() time.Duration
	// Replica, if set, tells kreact.replica() which replica the script
	// runs on. It is called at every kreact.replica() call, from the
	// runtime's goroutine, so it must be cheap and safe for concurrent
	// use. Nil means a replica named "" that leads.
	Replica func() Replica
}

// Replica is the identity of the kreact replica a script runs on, as
// kreact.replica() returns it.
type Replica struct {
	// Name is the replica's identity: its leader-election or shard
	// identity, else the host name.
	Name string
	// Leader is true when the replica leads: it holds the leader Lease
	// (--leader-elect), or, sharded, it makes the once-per-cluster ticks
	// (--shards); a replica that runs alone leads.
	Leader bool
}

const (
	defaultTimeout          = time.Second
	defaultMaxCallStackSize = 1024
	defaultMaxActions       = 100
	// abandonGrace is how long a call may overrun its timeout, stuck in
	// built-in code that Interrupt cannot stop, before Call gives up on it.
	abandonGrace = 250 * time.Millisecond
	// maxStuck is how many abandoned calls may still be running before
	// Call refuses to start more: each one holds a CPU.
	maxStuck = 2
	// maxLogsPerCall and maxLogSize bound what one call may log.
	maxLogsPerCall = 100
	maxLogSize     = 4 << 10
)

// Runtime runs one Program's handlers. It owns a goja.Runtime, built from
// the Program, which it replaces after a timeout, and a goroutine that runs
// the script so that Call can return even when the script is stuck in a
// built-in function that goja cannot interrupt.
//
// A Runtime is not safe for concurrent use: give each worker goroutine its
// own. Call blocks until the handler returns or, at the latest, about
// Timeout+250ms after it started. Host methods are called from the
// Runtime's goroutine, never concurrently for one Runtime. Close releases
// the goroutine; a Runtime that is garbage collected releases it too.
type Runtime struct {
	cfg *config

	// env is the current goja runtime; nil after a timeout until the next
	// Call builds a new one.
	env *env
	// alarm stops calls at their timeout; timer measures the grace
	// period after it. Only Call uses them.
	alarm *alarm
	timer *time.Timer
	// done receives the result of a call from the worker. A new channel
	// replaces it when a call is abandoned.
	done   chan error
	worker *workerBox
	closed bool
	// server is set while Serve runs: calls run on its goroutine.
	server *server
}

// config is what a Runtime and its goroutines share. It holds no reference
// to the Runtime, so that an unreachable Runtime can be collected and its
// goroutine stopped.
type config struct {
	p     *Program
	host  Host
	opts  RuntimeOptions
	grace time.Duration
	// reclaim asks for the memory of a call stopped for its memory
	// limit back (governor.Reclaim; tests replace it).
	reclaim func()
	// inflight counts worker goroutines, abandoned ones included.
	inflight sync.WaitGroup
	// stuck counts abandoned calls that are still running.
	stuck atomic.Int32
}

// env is one goja.Runtime with the program run in it and the API
// installed. Everything in it belongs to the goroutine running the script,
// except the fields that mu guards.
type env struct {
	cfg      *config
	vm       *goja.Runtime
	handlers [event.NumTypes]goja.Callable
	// unused holds, per handler, the arguments it never reads, which
	// call hands it as undefined (params.go); fnToString is the
	// original Function.prototype.toString, which tells.
	unused     [event.NumTypes]uint8
	fnToString goja.Callable
	date       goja.Value

	// Reset by Runtime.run before each call. pending and timer hold
	// what the call asked for: its transaction, handed out only when the
	// call returns normally. callEv is the event of the handler call
	// under way, copied in by Runtime.call (rather than captured by a
	// closure, which would put both on the heap at every call); ev
	// points to it while the handler runs, set on the script goroutine.
	handler string
	pending []actions.Action
	timer   *event.TimerRequest
	once    *actions.Action
	verdict event.Verdict
	callEv  event.Event
	ev      *event.Event
	logs    int

	// poisoned is set by the script goroutine when the runtime must not
	// be used again (timeout, memory limit, internal panic).
	poisoned bool
	// retired is set by the script goroutine when it ended after the
	// call, its thread demoted: the next call needs a new one.
	retired bool

	// meter registers each call with the governor: its memory and CPU
	// limits, its thread's priority, GOMAXPROCS.
	meter *governor.Meter
	// rangeErrorCtor is the RangeError constructor, kept before the
	// script can replace the global.
	rangeErrorCtor *goja.Object
	// syntaxErrorCtor is the SyntaxError constructor, kept likewise.
	syntaxErrorCtor *goja.Object
	// joining holds the arrays whose join is under way, innermost last.
	joining []*goja.Object

	// mu orders the end of a call against its abandonment.
	mu        sync.Mutex
	finished  bool
	abandoned atomic.Bool
	// While a call runs on a Serve's goroutine, server is that Serve's,
	// calls numbers the call and started is when it started: a trip
	// abandons that very call if it does not end within the grace
	// period (see watchServed).
	server  *server
	calls   uint64
	started time.Time

	// views is the chunk newObjectView allocates the call's views
	// from; viewsMade counts them, viewsBefore is the count of the call
	// before (see endViews).
	views                  []objectView
	viewsMade, viewsBefore int
	// argViews are the first views env.object made in the call, the
	// handler's objects: viewMap finds them there rather than through
	// goja's Export, which allocates. endViews forgets them.
	argViews     [2]argView
	argViewsMade int
	// lastGV and lastAPIVersion: see apiVersion.
	lastGV         schema.GroupVersion
	lastAPIVersion string

	// Scratch space, reused from call to call.
	args      [3]goja.Value
	stackBuf  []goja.StackFrame
	pathBuf   []pathStep
	jsonBuf   []byte
	keyBuf    []string
	parentBuf []*goja.Object
}

// job is one call handed to the worker goroutine: fn, or, when fn is nil,
// the handler of e.callEv.
type job struct {
	e    *env
	fn   func() error
	done chan<- error
}

// workerBox holds the channel to the current worker goroutine.
type workerBox struct {
	mu   sync.Mutex
	jobs chan job
}

// get returns the current worker's channel, starting a worker if there is
// none.
func (b *workerBox) get(cfg *config) chan job {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs == nil {
		b.jobs = make(chan job)
		cfg.inflight.Add(1)
		go work(cfg, b.jobs)
	}
	return b.jobs
}

// stop lets the current worker exit once it is idle.
func (b *workerBox) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs != nil {
		close(b.jobs)
		b.jobs = nil
	}
}

// work runs jobs until jobs is closed or a job is abandoned: an abandoned
// worker finishes its job on its own time and exits; a new worker serves
// the next call.
func work(cfg *config, jobs <-chan job) {
	defer cfg.inflight.Done()
	for j := range jobs {
		err := j.e.execOnThread(j.fn)
		abandoned := j.e.finish()
		demoted := j.e.retired
		j.done <- err
		if abandoned {
			cfg.stuck.Add(-1)
		}
		if abandoned || demoted {
			// A demoted thread cannot get its priority back without
			// privileges: the goroutine ends still locked to it, and Go
			// ends the thread with it.
			return
		}
	}
}

// execOnThread runs exec on the calling goroutine, locked to its thread
// for the call, so that the watchdog can lower the thread's priority if
// the call runs long (see governor.Meter). A demoted thread cannot get its
// priority back without privileges: the goroutine stays locked to it
// (retired is set) and must end, so that Go ends the thread with it.
func (e *env) execOnThread(fn func() error) error {
	runtime.LockOSThread()
	e.meter.Enter()
	err := e.exec(fn)
	demoted, used := e.meter.Leave(err != nil)
	if se, ok := err.(*event.ScriptError); ok {
		se.CPU = used
	}
	if !demoted {
		runtime.UnlockOSThread()
	}
	e.retired = demoted
	return err
}

// finish marks the call ended and reports whether it had been abandoned.
func (e *env) finish() (abandoned bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished = true
	e.server = nil
	return e.abandoned.Load()
}

// alarm interrupts the call under way at its timeout. Setting a timer for
// every call and stopping it after took about a tenth of an empty call's
// CPU (Go's timer heap), so the alarm's timer is set once and follows
// the calls: when it fires before the deadline of the call under way it
// is set again for that deadline, and when it fires between calls it
// stays unset until the next call sets it. Calls follow one another, and
// each deadline is no earlier than the one before, so the timer always
// fires at or before the deadline of the call under way.
type alarm struct {
	timeout time.Duration
	// t runs fire; it is set while armed is.
	t *time.Timer

	mu    sync.Mutex
	armed bool
	// e is the call under way, nil between calls; it is due at at.
	e  *env
	at time.Time
}

func newAlarm(timeout time.Duration) *alarm {
	a := &alarm{timeout: timeout}
	a.t = time.AfterFunc(time.Hour, a.fire)
	a.t.Stop()
	return a
}

// set starts the alarm for e's call, which started at started.
func (a *alarm) set(e *env, started time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e, a.at = e, started.Add(a.timeout)
	if !a.armed {
		a.armed = true
		a.t.Reset(time.Until(a.at))
	}
}

// clear ends e's call: the alarm no longer stops it. A call abandoned on
// a Serve's goroutine clears late, when the alarm may follow the call
// that replaced it: that one it leaves alone.
func (a *alarm) clear(e *env) {
	a.mu.Lock()
	if a.e == e {
		a.e = nil
	}
	a.mu.Unlock()
}

// fire interrupts the call under way if it is past its deadline, and
// tells Runtime.run through the call's meter (governor.Meter.Trip), as
// the watchdog does.
func (a *alarm) fire() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.e == nil {
		a.armed = false
		return
	}
	if d := time.Until(a.at); d > 0 {
		a.t.Reset(d)
		return
	}
	a.armed = false
	stop := &timeoutError{a.timeout}
	a.e.vm.Interrupt(stop)
	a.e.meter.Trip(stop)
	a.e = nil
}

// timeoutError is the value the runtime is interrupted with.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("timed out after %v", e.d) }

// NewRuntime builds a runtime for p: a goja.Runtime with the kreact and
// console globals, in which the script's top-level code has run once and
// its handlers have been looked up. A failure of the top-level code is a
// *event.ScriptError.
//
// host must be safe to call from a goroutine other than the caller's (see
// Runtime). The returned Runtime must be used by one goroutine at a time.
func NewRuntime(p *Program, host Host, opts RuntimeOptions) (*Runtime, error) {
	if p == nil || p.prg == nil {
		return nil, errors.New("new runtime: nil program")
	}
	if host == nil {
		return nil, errors.New("new runtime: nil host")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.MaxCallStackSize <= 0 {
		opts.MaxCallStackSize = defaultMaxCallStackSize
	}
	if opts.MaxActions <= 0 {
		opts.MaxActions = defaultMaxActions
	}
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	configureRegexp()
	r := &Runtime{
		cfg:    &config{p: p, host: host, opts: opts, grace: abandonGrace, reclaim: governor.Reclaim},
		alarm:  newAlarm(opts.Timeout),
		timer:  time.NewTimer(time.Hour),
		done:   make(chan error, 1),
		worker: &workerBox{},
	}
	r.timer.Stop()
	e, err := r.newEnv()
	if err != nil {
		r.worker.stop()
		return nil, err
	}
	r.env = e
	// A Runtime dropped without Close must not leave its goroutine behind.
	runtime.AddCleanup(r, (*workerBox).stop, r.worker)
	return r, nil
}

// Program returns the program the runtime runs.
func (r *Runtime) Program() *Program { return r.cfg.p }

// Close stops the runtime's goroutine. A call that was abandoned after its
// timeout may still be running; it ends on its own. Close is idempotent;
// Call returns event.ErrClosed afterwards.
func (r *Runtime) Close() {
	r.closed = true
	r.env = nil
	r.worker.stop()
	r.alarm.t.Stop()
}

// Call runs the handler for ev.Type and returns the actions it asked for.
// It returns nothing at once, without touching the script, when the script
// has no such handler.
//
// A call is a transaction: its actions are returned only when the handler
// returned normally. A call that throws, times out, overflows its stack,
// asks for more than MaxActions actions or for one the Host does not permit
// returns a *event.ScriptError and no action, so the caller can retry it without
// repeating half of it.
//
// After a timeout the runtime is rebuilt, on the next call, from the
// Program: the script's global state starts over. While earlier calls are
// still stuck in built-in code that cannot be interrupted, Call fails at
// once with a event.ScriptError wrapping event.ErrStuck.
//
// ev and the objects in it are not modified and not kept after Call
// returns, unless the script keeps them in its global state.
func (r *Runtime) Call(ev event.Event) ([]actions.Action, error) {
	out, err := r.Invoke(ev)
	return out.Actions, err
}

// Invoke is Call, returning the whole transaction of the call: its
// actions and its timer (kreact.after). The same rules apply: nothing is
// returned from a call that did not return normally.
func (r *Runtime) Invoke(ev event.Event) (event.Outcome, error) {
	i, ok := ev.Type.Index()
	switch {
	case !ok:
		return event.Outcome{}, fmt.Errorf("call: unknown event type %q", ev.Type)
	case r.closed:
		return event.Outcome{}, event.ErrClosed
	case !r.cfg.p.handlers[i]:
		return event.Outcome{}, nil
	}
	return r.call(i, ev)
}

// call is Invoke's slow path: a missing handler costs nothing.
func (r *Runtime) call(i int, ev event.Event) (event.Outcome, error) {
	if n := r.cfg.stuck.Load(); n >= maxStuck {
		return event.Outcome{}, &event.ScriptError{
			Rule:     r.cfg.opts.Rule,
			Handler:  ev.Type.Handler(),
			Position: diag.Position{Rule: r.cfg.opts.Rule, File: r.cfg.p.name},
			Message:  fmt.Sprintf("not run: %d earlier calls are still stuck in built-in code", n),
			Timeout:  true,
			Err:      event.ErrStuck,
		}
	}
	if r.env == nil {
		e, err := r.newEnv()
		if err != nil {
			return event.Outcome{}, err
		}
		r.env = e
	}
	e := r.env
	e.callEv = ev
	err := r.run(e, ev.Type.Handler(), nil)
	if err == event.ErrAbandoned {
		// r belongs to the goroutine that serves in this one's place.
		return event.Outcome{}, err
	}
	// poisoned is read only when the worker finished the call; an
	// abandoned call's worker still reads e.
	if e.abandoned.Load() || e.poisoned {
		r.env = nil
	} else {
		// The objects are not kept after Call returns.
		e.callEv = event.Event{}
	}
	if se, ok := err.(*event.ScriptError); ok && se.Memory {
		// The discarded runtime's values are garbage now.
		r.cfg.reclaim()
	}
	if err != nil {
		return event.Outcome{}, err
	}
	// The worker has finished (run received its result), so pending is
	// no longer written; the next run starts a new slice.
	return event.Outcome{Actions: e.pending, Timer: e.timer, Once: e.once, Verdict: e.verdict}, nil
}

// newEnv builds a goja runtime and runs the program's top level in it.
func (r *Runtime) newEnv() (*env, error) {
	p := r.cfg.p
	e := &env{cfg: r.cfg, vm: goja.New()}
	e.meter = governor.NewMeter(e.vm, r.cfg.opts.MemoryLimit, r.cfg.opts.CPULimit)
	e.meter.OnTrip(e.watchServed)
	e.install()
	err := r.run(e, "", func() error {
		if _, err := e.vm.RunProgram(p.prg); err != nil {
			return err
		}
		v, err := e.vm.RunProgram(p.lookup)
		if err != nil {
			return err
		}
		list := v.(*goja.Object)
		for i, t := range event.Types() {
			name := t.Handler()
			if !p.handlers[i] {
				continue
			}
			v := list.Get(fmt.Sprint(i))
			fn, ok := goja.AssertFunction(v)
			if !ok {
				return fmt.Errorf("%s is declared but is not a function", name)
			}
			e.handlers[i] = fn
			e.unused[i] = p.handlerArgs(i, v, e.fnToString)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if e.abandoned.Load() || e.poisoned {
		return nil, errors.New("new runtime: runtime unusable after its top level ran")
	}
	return e, nil
}

// run hands fn, which calls into the script, to the worker goroutine and
// waits for it. At the timeout it interrupts the script; if the script does
// not stop within the grace period (stuck in a built-in function, which
// goja cannot interrupt), run abandons the call: the worker and its goja
// runtime are left to finish on their own, and what they ask for is never
// handed out.
func (r *Runtime) run(e *env, handler string, fn func() error) error {
	if r.server != nil {
		return r.runHere(r.server, e, handler, fn)
	}
	cfg := r.cfg
	started := e.begin(handler, nil)
	e.meter.Begin(started)
	defer e.meter.End()
	r.alarm.set(e, started)
	defer r.alarm.clear(e)
	r.worker.get(cfg) <- job{e: e, fn: fn, done: r.done}
	// finished is a call's end once the worker sent its result.
	finished := func(err error) error {
		if e.retired {
			r.worker.stop()
		}
		return err
	}
	var stopped error
	select {
	case err := <-r.done:
		return finished(err)
	case stopped = <-e.meter.Tripped():
		// The alarm or the watchdog has interrupted the call already.
	}
	r.timer.Reset(cfg.grace)
	select {
	case err := <-r.done:
		r.timer.Stop()
		return finished(err)
	case <-r.timer.C:
	}

	e.mu.Lock()
	if e.finished {
		e.mu.Unlock()
		return finished(<-r.done)
	}
	e.abandoned.Store(true)
	cfg.stuck.Add(1)
	e.mu.Unlock()
	// The stuck worker keeps the old channels; the next call gets new ones.
	r.worker.stop()
	r.done = make(chan error, 1)
	return cfg.abandonedError(handler, stopped, started)
}

// begin readies e for a call of handler (empty for the top level), to be
// run on server's goroutine (nil: on the worker's), and returns its start.
func (e *env) begin(handler string, s *server) time.Time {
	e.handler = handler
	e.pending = nil
	e.timer = nil
	e.once = nil
	e.verdict = event.Verdict{}
	e.logs = 0
	e.retired = false
	started := time.Now()
	e.mu.Lock()
	e.finished = false
	e.server, e.calls, e.started = s, e.calls+1, started
	e.mu.Unlock()
	// A late Interrupt of the previous call must not stop this one.
	e.vm.ClearInterrupt()
	return started
}

// abandonedError is the error of a call of handler that stop interrupted
// at started and that did not stop within the grace period.
func (cfg *config) abandonedError(handler string, stop error, started time.Time) *event.ScriptError {
	se := &event.ScriptError{
		Rule:     cfg.opts.Rule,
		Handler:  handler,
		Position: diag.Position{Rule: cfg.opts.Rule, File: cfg.p.name},
		Message: fmt.Sprintf("%v and did not stop within %v (stuck in a built-in function); runtime discarded",
			stop, cfg.grace),
		Err: stop,
		// Stuck in a built-in: assume it ran all along.
		CPU: time.Since(started),
	}
	describeStop(se, stop)
	return se
}

// runHere is run on the goroutine of s, a Serve: the call runs right here.
// The alarm and the watchdog interrupt it as they do a worker's; if it
// does not stop within the grace period, watchServed abandons it, and
// runHere, once the call ends if ever, returns event.ErrAbandoned.
func (r *Runtime) runHere(s *server, e *env, handler string, fn func() error) error {
	started := e.begin(handler, s)
	e.meter.Begin(started)
	r.alarm.set(e, started)
	err := e.execOnThread(fn)
	r.alarm.clear(e)
	e.meter.End()
	if e.finish() {
		r.cfg.stuck.Add(-1)
		return event.ErrAbandoned
	}
	if e.retired {
		// The rest of the step (settling the call, the first attempt
		// at its last action) runs on the demoted thread; then the
		// goroutine ends and a new one serves.
		s.retire = true
	}
	return err
}

// watchServed is each env's trip hook (governor.Meter.OnTrip): a call on
// a Serve's goroutine that was interrupted and has not ended within the
// grace period is abandoned, and its error goes to the Serve, which
// carries on with another goroutine. A worker's call is watched by run.
func (e *env) watchServed(stop error) {
	e.mu.Lock()
	s, call, started, handler := e.server, e.calls, e.started, e.handler
	e.mu.Unlock()
	if s == nil {
		return
	}
	cfg := e.cfg
	time.AfterFunc(cfg.grace, func() {
		e.mu.Lock()
		if e.finished || e.calls != call || e.abandoned.Load() {
			e.mu.Unlock()
			return
		}
		e.abandoned.Store(true)
		cfg.stuck.Add(1)
		e.mu.Unlock()
		s.stuck <- cfg.abandonedError(handler, stop, started)
	})
}

// server is one goroutine of a Serve.
type server struct {
	// stuck receives the error of the call the goroutine is stuck in; at
	// most one, since the goroutine serves no other call after it.
	stuck chan error
	// ended receives whether the goroutine ended to be replaced (its
	// thread demoted: retire) or because step returned false.
	ended  chan bool
	retire bool
	// gone is set once another goroutine serves: this one ends after its
	// step, whatever step returns.
	gone atomic.Bool
}

// Serve makes the calls of step, and of every step after it, on the
// runtime's own goroutine, which spares the two hand-overs between
// goroutines of each Invoke from another goroutine: Serve calls step on
// that goroutine until step returns false, and Invoke, called from step,
// runs the call right there. Serve returns once step returned false.
//
// A call stuck in built-in code that goja cannot interrupt still does not
// hold up the caller: when it has not stopped within the grace period
// after its timeout (or its memory or CPU limit), Serve calls abandoned,
// on Serve's own goroutine, with the error Invoke would have returned,
// and goes on calling step on a new goroutine. The stuck goroutine's
// Invoke returns event.ErrAbandoned when the call ends, if ever; its step must
// then return at once, without acting on the call, which abandoned has
// settled.
//
// Invoke must not be called from elsewhere while Serve runs, and Close
// must not be called before Serve returned.
func (r *Runtime) Serve(step func() bool, abandoned func(error)) {
	// The worker's goroutine has nothing to do meanwhile.
	r.worker.stop()
	defer func() { r.server = nil }()
	for {
		s := &server{stuck: make(chan error, 1), ended: make(chan bool, 1)}
		r.server = s
		r.cfg.inflight.Add(1)
		go func() {
			defer r.cfg.inflight.Done()
			for {
				more := step()
				switch {
				case s.gone.Load():
					return
				case !more:
					s.ended <- false
					return
				case s.retire:
					// Locked to a demoted thread: end it (see execOnThread).
					s.ended <- true
					return
				}
			}
		}()
		select {
		case replace := <-s.ended:
			if !replace {
				return
			}
		case err := <-s.stuck:
			s.gone.Store(true)
			// The stuck goroutine no longer touches r: the next call
			// builds a new goja runtime.
			r.env = nil
			abandoned(err)
		}
	}
}

// exec runs fn, or the handler of e.callEv when fn is nil, on the script
// goroutine and turns its failure into a *event.ScriptError. It recovers panics:
// a bug must not take the process down from a goroutine nobody waits on.
func (e *env) exec(fn func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			e.poisoned = true
			err = &event.ScriptError{
				Rule:     e.cfg.opts.Rule,
				Handler:  e.handler,
				Position: diag.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name},
				Message:  fmt.Sprintf("internal error: %v", x),
				Err:      fmt.Errorf("panic: %v\n%s", x, debug.Stack()),
			}
		}
	}()
	if fn == nil {
		err = e.call()
	} else {
		err = fn()
	}
	if err != nil {
		return e.scriptError(err)
	}
	return nil
}

// call runs the handler of e.callEv with the event's arguments.
func (e *env) call() error {
	ev := &e.callEv
	i, _ := ev.Type.Index()
	e.ev = ev
	defer func() {
		e.ev = nil
		e.endViews()
	}()
	// An argument the handler never reads is not built (params.go).
	unused := e.unused[i]
	// goja copies the arguments onto its stack: the slice is reused.
	args := e.args[:0]
	switch ev.Type {
	case event.Update:
		args = append(args, e.eventArg(ev, ev.OldObject, true, unused&1 != 0), e.eventArg(ev, ev.Object, false, unused&2 != 0))
	case event.Tick:
	case event.Validate, event.Mutate:
		if unused&1 != 0 {
			args = append(args, goja.Undefined())
		} else {
			args = append(args, e.admissionRequest(ev))
		}
	default:
		args = append(args, e.eventArg(ev, ev.Object, false, unused&1 != 0))
	}
	if unused&(1<<len(args)) != 0 {
		args = append(args, goja.Undefined())
	} else {
		args = append(args, e.vm.NewDynamicObject(newCtxView(e, ev)))
	}
	ret, err := e.handlers[i](goja.Undefined(), args...)
	clear(e.args[:])
	if err != nil {
		return err
	}
	ret, err = e.settled(ret)
	if err != nil || !ev.Type.Admission() {
		return err
	}
	return e.decide(ev.Type, ret)
}

// eventArg is eventObject for a handler's argument, undefined when the
// handler never reads it.
func (e *env) eventArg(ev *event.Event, u *unstructured.Unstructured, old, unused bool) goja.Value {
	if unused {
		return goja.Undefined()
	}
	return e.eventObject(ev, u, old)
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// settled checks the promise an async handler returns, and returns the
// value it was fulfilled with, or ret when it is not a promise. goja runs
// promise jobs before the outermost call returns, so a handler that awaits
// only kreact calls has settled by now.
func (e *env) settled(ret goja.Value) (goja.Value, error) {
	o, ok := ret.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return ret, nil
	}
	p := o.Export().(*goja.Promise)
	switch p.State() {
	case goja.PromiseStateRejected:
		return nil, &rejection{e.safeString(p.Result())}
	case goja.PromiseStatePending:
		return nil, &rejection{"the handler returned a promise that did not settle"}
	}
	return p.Result(), nil
}

// rejection is a rejected or pending promise returned by a handler.
type rejection struct{ msg string }

func (r *rejection) Error() string { return r.msg }

// scriptError describes a failure of the script. Converting an exception to
// a string may run script code (a thrown object's toString), so it runs
// here, on the script goroutine, still under the timeout.
func (e *env) scriptError(err error) *event.ScriptError {
	se := &event.ScriptError{Rule: e.cfg.opts.Rule, Handler: e.handler, Err: err}
	var (
		interrupted *goja.InterruptedError
		overflow    *goja.StackOverflowError
		ex          *goja.Exception
		rej         *rejection
	)
	switch {
	case errors.As(err, &interrupted):
		e.poisoned = true
		describeStop(se, interrupted.Value())
		se.Message = fmt.Sprint(interrupted.Value())
		se.Position, se.Stack = e.describe(interrupted.Stack())
	case errors.As(err, &overflow):
		se.Message = fmt.Sprintf("RangeError: maximum call stack size (%d) exceeded", e.cfg.opts.MaxCallStackSize)
		se.Position, se.Stack = e.describe(overflow.Stack())
	case errors.As(err, &ex):
		se.Message = e.safeString(ex.Value())
		se.Position, se.Stack = e.describe(ex.Stack())
	case errors.As(err, &rej):
		se.Message = "promise rejected: " + rej.msg
		se.Position = diag.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name}
	default:
		se.Message = err.Error()
		se.Position = diag.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name}
	}
	return se
}

// safeString converts a thrown value to a string. It may run script code;
// if that fails too, it says so rather than failing again.
func (e *env) safeString(v goja.Value) (s string) {
	if v == nil {
		return "undefined"
	}
	defer func() {
		if x := recover(); x != nil {
			if _, ok := x.(*goja.InterruptedError); ok {
				e.poisoned = true
			}
			s = "(exception that cannot be converted to a string)"
		}
	}()
	if ex := e.vm.Try(func() { s = v.String() }); ex != nil {
		return "(exception that cannot be converted to a string)"
	}
	return s
}

// describe returns the position of the innermost script frame and the
// stack, with positions moved to the rule file.
func (e *env) describe(frames []goja.StackFrame) (pos diag.Position, stack string) {
	lines := make([]string, 0, len(frames))
	for i := range frames {
		f := &frames[i]
		p := f.Position()
		if p.Line == 0 {
			lines = append(lines, "at "+f.FuncName()+" (native)")
			continue
		}
		here := e.position(p)
		if pos.File == "" {
			pos = here
		}
		lines = append(lines, "at "+f.FuncName()+" ("+here.String()+")")
	}
	if pos.File == "" {
		pos = diag.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name}
	}
	return pos, strings.Join(collapseStack(lines), "\n")
}

const (
	// maxStackPeriod is the longest cycle of frames collapseStack folds:
	// recursion through up to this many functions.
	maxStackPeriod = 8
	// maxStackLines bounds a stack once folded: the innermost and the
	// outermost frames are kept, the middle is counted.
	maxStackLines, keepInner, keepOuter = 24, 16, 6
)

// collapseStack folds repeated frames, as deep recursion makes them, so
// that a stack stays a few lines long: a block of up to maxStackPeriod
// lines repeated consecutively is kept once, followed by
// "… 1,020 more frames of f (rule.yaml:3:5)". A stack still longer than
// maxStackLines keeps its innermost and outermost frames.
func collapseStack(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); {
		bestP, bestK := 1, 1
		for p := 1; p <= maxStackPeriod && i+2*p <= len(lines); p++ {
			k := 1
			for i+(k+1)*p <= len(lines) && slices.Equal(lines[i:i+p], lines[i+k*p:i+(k+1)*p]) {
				k++
			}
			if k > 1 && (k-1)*p > (bestK-1)*bestP {
				bestP, bestK = p, k
			}
		}
		out = append(out, lines[i:i+bestP]...)
		if bestK > 1 {
			funcs := make([]string, bestP)
			for j, l := range lines[i : i+bestP] {
				funcs[j] = strings.TrimPrefix(l, "at ")
			}
			out = append(out, fmt.Sprintf("… %s more frames of %s", thousands((bestK-1)*bestP), strings.Join(funcs, ", ")))
		}
		i += bestK * bestP
	}
	if len(out) > maxStackLines {
		n := len(out) - keepInner - keepOuter
		out = slices.Concat(out[:keepInner], []string{fmt.Sprintf("… %s more lines", thousands(n))}, out[len(out)-keepOuter:])
	}
	return out
}

// thousands writes n with commas: 1,020.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// describeStop records why the call was interrupted: the value it was
// interrupted with.
func describeStop(e *event.ScriptError, stopped any) {
	switch v := stopped.(type) {
	case *governor.MemoryError:
		e.Memory, e.Allocated = true, v.Used
	case *governor.CPUError:
		e.CPULimit = true
	default:
		e.Timeout = true
	}
}
