package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// options are the command's flags.
type options struct {
	seed     uint64
	duration time.Duration
	shards   bool
	faults   string
	kreact   string
	from     string
	replay   string
	shrink   time.Duration
	dir      string
	check    string
}

func main() {
	var o options
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.Uint64Var(&o.seed, "seed", 0, "the run's seed: the same seed makes the same operations in the same order (0: one from the clock, printed)")
	fs.DurationVar(&o.duration, "duration", 2*time.Minute, "how long to make operations for, before kreact settles and the oracle checks")
	fs.BoolVar(&o.shards, "shards", false, "run two to three kreact replicas with --shards, and add, kill and restart them")
	fs.StringVar(&o.faults, "faults", "all", "faults to inject, comma-separated: restarts (SIGTERM, SIGKILL), apiserver, edits; all, or none")
	fs.StringVar(&o.kreact, "kreact", "", "the kreact binary (default: built from this checkout)")
	fs.StringVar(&o.from, "from", "", "upgrade from this kreact binary, or from a git revision (rev:REV) built here: replicas start with it and are replaced by -kreact one at a time")
	fs.StringVar(&o.replay, "replay", "", "make the operations of this file (written by a run that found violations) instead of the seed's")
	fs.DurationVar(&o.shrink, "shrink", 20*time.Minute, "time to spend shrinking the operations of a run that found violations (0: do not shrink)")
	fs.StringVar(&o.check, "check", "", "check the history.json a run wrote again with this oracle, without a control plane")
	fs.StringVar(&o.dir, "dir", "", "where to keep the runs' rule files and kreact's logs (default: a new temporary directory)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: go run ./hack/chaos [flags]\n\nChecks kreact's delivery contract under random operations and faults against a\nlocal control plane (make controlplane). Exit code 0: no violation, 1:\nviolations (printed, with the shortest operations found), 2: the run failed.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := chaos(ctx, o, os.Stdout)
	switch {
	case errors.Is(err, errViolations):
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
}

// parseFaults reads -faults.
func parseFaults(s string, shards bool) (Faults, error) {
	f := Faults{Shards: shards}
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "all":
			f.Restarts, f.APIServer, f.Edits = true, true, true
		case "none", "":
		case "restarts":
			f.Restarts = true
		case "apiserver":
			f.APIServer = true
		case "edits":
			f.Edits = true
		default:
			return f, fmt.Errorf("-faults: unknown fault %q (restarts, apiserver, edits, all, none)", name)
		}
	}
	return f, nil
}

func chaos(ctx context.Context, o options, out io.Writer) error {
	faults, err := parseFaults(o.faults, o.shards)
	if err != nil {
		return err
	}
	if o.check != "" {
		data, err := os.ReadFile(o.check)
		if err != nil {
			return err
		}
		var h History
		if err := json.Unmarshal(data, &h); err != nil {
			return fmt.Errorf("%s: %w", o.check, err)
		}
		violations := Check(&h)
		Report(out, &h, violations, faults)
		if len(violations) > 0 {
			return errViolations
		}
		return nil
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "kreact-chaos-"); err != nil {
			return err
		}
	}
	if o.kreact == "" {
		o.kreact = filepath.Join(o.dir, "kreact")
		fmt.Fprintln(out, "building kreact")
		if err := buildKreact(o.kreact); err != nil {
			return err
		}
	}
	if rev, ok := strings.CutPrefix(o.from, "rev:"); ok {
		o.from = filepath.Join(o.dir, "kreact-previous")
		fmt.Fprintf(out, "building kreact at %s\n", rev)
		if err := buildRevision(rev, o.from); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "starting the control plane")
	cl, err := testcluster.Start(testcluster.Options{})
	if err != nil {
		return err
	}
	defer cl.Stop()
	c := &Checker{Cluster: cl, Kreact: o.kreact, From: o.from, Dir: o.dir, Faults: faults, Out: out}
	if c.Client, err = dynamic.NewForConfig(cl.Config()); err != nil {
		return err
	}
	var ops []Op
	if o.replay != "" {
		data, err := os.ReadFile(o.replay)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &ops); err != nil {
			return fmt.Errorf("%s: %w", o.replay, err)
		}
	}
	h, violations, err := c.Run(ctx, o.seed, o.duration, ops)
	if err != nil {
		return err
	}
	Report(out, h, violations, faults)
	if len(violations) == 0 {
		return nil
	}
	if o.shrink > 0 {
		short := c.Shrink(ctx, o.seed, h.Ops, violations, o.shrink)
		file := filepath.Join(o.dir, fmt.Sprintf("seed-%d.ops.json", o.seed))
		data, _ := json.MarshalIndent(short, "", "  ")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nthe shortest sequence found that still shows it: %d of %d operations (replay: go run ./hack/chaos -replay %s%s)\n",
			len(short), len(h.Ops), file, map[bool]string{true: " -shards"}[o.shards])
		for i, op := range short {
			fmt.Fprintf(out, "  %3d  %s\n", i+1, op)
		}
	}
	return errViolations
}

// buildKreact builds kreact from the checkout this command runs in.
func buildKreact(to string) error { return buildTree(moduleRoot(), to) }

// buildTree builds the kreact command of the source tree at dir into to.
func buildTree(dir, to string) error {
	cmd := exec.Command("go", "build", "-o", to, "./cmd/kreact")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build kreact in %s: %w", dir, err)
	}
	return nil
}

// buildRevision builds kreact as it was at the git revision rev of this
// checkout, in a copy of that revision's tree beside to.
func buildRevision(rev, to string) error {
	src := to + ".src"
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", rev)
	archive.Dir = moduleRoot()
	untar := exec.Command("tar", "-x", "-C", src)
	var err error
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return err
	}
	archive.Stderr, untar.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("unpack %s: %w", rev, err)
	}
	if err := buildTree(src, to); err != nil {
		return fmt.Errorf("at %s: %w", rev, err)
	}
	return nil
}

// PreviousRevision is the revision an upgrade starts from: the newest
// release tag before HEAD, or, while there is none, HEAD's parent.
func PreviousRevision() (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = moduleRoot()
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if tag, err := git("describe", "--tags", "--abbrev=0", "HEAD^"); err == nil && tag != "" {
		return tag, nil
	}
	rev, err := git("rev-parse", "--verify", "HEAD^")
	if shallow, _ := git("rev-parse", "--is-shallow-repository"); err != nil && shallow == "true" {
		// A shallow clone (CI's, often) has no parent: fetch it.
		if _, ferr := git("fetch", "--quiet", "--deepen=1"); ferr == nil {
			rev, err = git("rev-parse", "--verify", "HEAD^")
		}
	}
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD^ in %s (an upgrade is built from the checkout's history): %w", moduleRoot(), err)
	}
	return rev, nil
}

// moduleRoot is the directory above the working directory that holds
// kreact's go.mod.
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "kreact")); err == nil {
			return d
		}
	}
	return dir
}

// Checker makes runs on one control plane.
type Checker struct {
	Cluster Cluster
	Client  dynamic.Interface
	Kreact  string
	// From is the previous build, or "": replicas start with it and are
	// upgraded to Kreact one at a time during the run (upgrades).
	From   string
	Dir    string
	Faults Faults
	Out    io.Writer
	runs   int
}

// Run makes a run: the operations ops, or, when ops is nil, those of
// seed for duration; then the oracle checks its history.
func (c *Checker) Run(ctx context.Context, seed uint64, duration time.Duration, ops []Op) (*History, []Violation, error) {
	c.runs++
	name := fmt.Sprintf("chaos-%d-%d", seed, c.runs)
	dir := filepath.Join(c.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	var next func() (Op, bool)
	if ops != nil {
		i := 0
		next = func() (Op, bool) {
			if i == len(ops) {
				return Op{}, false
			}
			i++
			return ops[i-1], true
		}
	} else {
		g, start, end := NewGenerator(seed, c.Faults), time.Now(), time.Now().Add(duration)
		// The upgrades are spread evenly over the run, between the
		// generator's operations.
		upgrades, made := c.upgrades(), 0
		next = func() (Op, bool) {
			if made < len(upgrades) && time.Since(start) >= duration*time.Duration(made+1)/time.Duration(len(upgrades)+1) {
				made++
				return upgrades[made-1], true
			}
			return g.Next(), time.Now().Before(end)
		}
	}
	fmt.Fprintf(c.Out, "run %s: seed %d, kreact's logs in %s\n", name, seed, dir)
	h, err := run(ctx, c.Cluster, c.Client, Config{Kreact: c.Kreact, From: c.From, Dir: dir, Name: name, Faults: c.Faults}, seed, next)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", name, err)
	}
	// Kept to check again (-check) when the oracle changes.
	data, _ := json.Marshal(h)
	if err := os.WriteFile(filepath.Join(dir, "history.json"), data, 0o644); err != nil {
		return nil, nil, err
	}
	return h, Check(h), nil
}

// upgrades are the Upgrade operations of a run with From: every replica
// slot in turn, as a rolling update replaces Pods one at a time, each
// down for a second.
func (c *Checker) upgrades() []Op {
	if c.From == "" {
		return nil
	}
	n := 1
	if c.Faults.Shards {
		n = maxReplicas
	}
	var ops []Op
	for slot := range n {
		ops = append(ops, Op{Kind: Upgrade, Slot: slot, Down: time.Second})
	}
	return ops
}

// Report prints what a run did and what the oracle found.
func Report(out io.Writer, h *History, violations []Violation, faults Faults) {
	count := func(keys []string) string {
		n := map[string]int{}
		for _, k := range keys {
			n[k]++
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(n)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
		}
		return strings.Join(parts, ", ")
	}
	var ops, calls []string
	for _, op := range h.Ops {
		k := string(op.Kind)
		if op.Resource != "" {
			k += " " + op.Resource
		}
		ops = append(ops, k)
	}
	for _, c := range h.Calls {
		calls = append(calls, c.Rule+" "+c.Handler)
	}
	fmt.Fprintf(out, "seed %d: %d operations in %v, kreact settled %v later\n", h.Seed, len(h.Ops), h.OpsEnd.Sub(h.Start).Round(time.Second), h.End.Sub(h.OpsEnd).Round(time.Second))
	fmt.Fprintf(out, "  operations: %s\n", count(ops))
	fmt.Fprintf(out, "  writes that changed an object: %d; kreact processes: %d; calls: %s\n", len(h.Writes), len(h.Procs), count(calls))
	if len(violations) == 0 {
		fmt.Fprintf(out, "  no violation of the %d guarantees\n", len(guarantees))
		return
	}
	fmt.Fprintf(out, "  %d violations (reproduce: make chaos SEED=%d DURATION=%v%s):\n", len(violations), h.Seed, h.OpsEnd.Sub(h.Start).Round(time.Second), map[bool]string{true: " CHAOSFLAGS=-shards"}[faults.Shards])
	for _, v := range violations {
		fmt.Fprintf(out, "  - %s\n", v)
	}
	seen := map[string]bool{}
	for _, v := range violations {
		if !seen[v.Guarantee] {
			seen[v.Guarantee] = true
			i := slices.IndexFunc(guarantees, func(g guarantee) bool { return g.name == v.Guarantee })
			fmt.Fprintf(out, "  %q is %s\n", v.Guarantee, guarantees[i].doc)
		}
	}
}
