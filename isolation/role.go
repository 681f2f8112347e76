package isolation

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
)

// ReplicaEnv names, in the environment of the isolated rules' process, the
// replica it is part of (its parent's name), for kreact.replica().
const ReplicaEnv = "KREACT_REPLICA"

// Role is a kreact run process's part in isolation: whether it is the
// isolated rules' process, which runs only those, and only while its
// parent runs and leads; and if so, its reports to its parent.
type Role struct {
	// Child is set in the isolated rules' process (ChildEnv is "1").
	Child bool
	// Replica is the name of the replica the child is part of
	// (ReplicaEnv); empty in kreact run's own process.
	Replica string
	// Reporter is the child's reports to its parent; nil reports nothing.
	Reporter *Reporter
}

// RoleOf returns the role that the environment (getenv) gives this
// process; an error if it is the child and its report descriptor cannot
// be opened (OpenReporter).
func RoleOf(getenv func(string) string) (Role, error) {
	if getenv(ChildEnv) != "1" {
		return Role{}, nil
	}
	reporter, err := OpenReporter(getenv)
	return Role{Child: true, Replica: getenv(ReplicaEnv), Reporter: reporter}, err
}

// Loaded returns the rule set's engine.RuleSet.Loaded: ready, and in the
// child a report of the count to its parent too.
func (r Role) Loaded(ready func(int)) func(int) {
	if !r.Child {
		return ready
	}
	return func(n int) { ready(n); r.Reporter.Loaded(n) }
}

// Ended returns err, with which kreact run ends; the child reports an
// engine.NoRulesError (none of its rules can run) to its parent first.
func (r Role) Ended(err error) error {
	if errors.As(err, new(*engine.NoRulesError)) {
		r.Reporter.Invalid(err)
	}
	return err
}

// ReadRules reads kreact run's rule files at paths with read, and logs
// their errors once: a rule with errors does not run, the others do; with
// none left, it returns an engine.NoRulesError with every error (Ended:
// the child reports it). The child reads the same files as its parent,
// and leaves their errors to the parent to log. With no paths
// (--rule-objects alone) there is nothing to read.
func (r Role) ReadRules(ctx context.Context, read engine.Reader, paths []string, logger *slog.Logger) (engine.RuleFiles, error) {
	if len(paths) == 0 {
		return engine.RuleFiles{}, nil
	}
	files, err := read(ctx, "run: loading rules", paths)
	if err = cmp.Or(err, files.NoRules(paths)); err != nil {
		return files, r.Ended(err)
	}
	if !r.Child {
		diag.Log(logger, "rules with errors are not running", files.Err)
	}
	return files, nil
}

// Command returns the kreact run of the isolated rules (Options.Command):
// this program run with args, told by its environment to run only those,
// as part of replica, writing its output to stderr.
func Command(args []string, stderr io.Writer, replica string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1", ReplicaEnv+"="+replica)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd
}
