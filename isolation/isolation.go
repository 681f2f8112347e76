package isolation

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"time"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
)

// Options configure a process's Isolation.
type Options struct {
	// Child is set in the isolated rules' process (ChildEnv is "1").
	Child bool
	// Refuse, if set in kreact run's process, is why isolated rules cannot
	// run (Split.Refuse): no child is started and no rule moves.
	Refuse string
	// MoveMisbehaving moves a rule whose call hogged kreact run's process
	// to the child (kreact run --isolate-misbehaving).
	MoveMisbehaving bool
	// Command builds the child's command, at each start (Supervisor).
	Command func() *exec.Cmd
	// Parent is what the child reads from the kreact run that started it
	// (its standard input; Listen).
	Parent io.Reader
	// Logger receives the moves and the child's starts and exits. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Isolation is one process's side of the isolated rules, the one value
// kreact run builds for them: the Split of the rule set between the two
// processes, and in kreact run the Supervisor of the child. It gives the
// engine its options (CPULimit, RunsElsewhere, Failures), the rule set
// its loader (Loader) and the count of the other side (Elsewhere), and is
// itself the lifecycle.Runnable of what runs beside them: the reloads
// after moves, and the child.
type Isolation struct {
	split *Split
	// sup is the child's Supervisor, in kreact run unless Refuse is set.
	sup *Supervisor
}

// New returns a process's Isolation. In the child it first reads what
// kreact run moved there so far (Listen), so that the first load runs
// those rules; a first message that cannot be read is an error.
func New(opts Options) (*Isolation, error) {
	i := &Isolation{split: &Split{Isolated: opts.Child, Refuse: opts.Refuse, Logger: opts.Logger}}
	switch {
	case opts.Child:
		if err := Listen(i.split, opts.Parent); err != nil {
			return nil, err
		}
	case opts.Refuse == "":
		logger := opts.Logger
		if logger == nil {
			logger = slog.Default()
		}
		i.sup = NewSupervisor(opts.Command, logger)
		i.split.Child = i.sup
		if opts.MoveMisbehaving {
			i.split.MovedTo, i.sup.MovedFrom = i.sup, i.split
		}
	}
	return i, nil
}

// Loader returns what loads this side's rules into eng: the rule set's
// engine (engine.RuleSet.Engine). It is called once, before Start.
func (i *Isolation) Loader(eng engine.StatusLoader) *Split {
	i.split.Engine = eng
	return i.split
}

// Rules returns the rules of rs that run in this process.
func (i *Isolation) Rules(rs []*rules.Rule) []*rules.Rule { return i.split.Rules(rs) }

// CPULimit is the engine's engine.Options.CPULimit (Split.CPULimit).
func (i *Isolation) CPULimit() time.Duration { return i.split.CPULimit() }

// RunsElsewhere is the engine's engine.Options.RunsElsewhere
// (Split.RunsElsewhere).
func (i *Isolation) RunsElsewhere(removed *rules.Rule) bool { return i.split.RunsElsewhere(removed) }

// CallFailed makes an Isolation the engine's engine.Options.Failures: a
// call that hogged the process moves its rule (Split.Misbehaved).
func (i *Isolation) CallFailed(rule string, err error) { i.split.Misbehaved(rule, err) }

var _ delivery.Failures = (*Isolation)(nil)

// Elsewhere is the child's Supervisor, which tells how many rules the
// other process runs (engine.RuleSet.Elsewhere), or nil where there is none.
func (i *Isolation) Elsewhere() engine.Elsewhere {
	if i.sup == nil {
		return nil // not a nil *Supervisor in the interface
	}
	return i.sup
}

// RulesElsewhere returns the names of the rules of the last load that run
// in the other process (Split.Elsewhere).
func (i *Isolation) RulesElsewhere() []string { return i.split.Elsewhere() }

// Start runs the reloads after moves, and in kreact run the child, until
// ctx ends.
func (i *Isolation) Start(ctx context.Context) error {
	g := lifecycle.Group{i.split}
	if i.sup != nil {
		g = append(g, i.sup)
	}
	return g.Start(ctx)
}
