package cmdline

import (
	"errors"
	"fmt"
	"io"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/record"
)

// Exit codes. They are part of the CLI's contract (see docs/cli.md).
const (
	ExitOK      = 0 // success
	ExitError   = 1 // a runtime failure, or a failing `kreact test`
	ExitUsage   = 2 // bad flags or arguments
	ExitInvalid = 3 // invalid input: rule files, resource names, test files
	ExitCluster = 4 // cannot reach or authenticate to the cluster
	ExitChanges = 5 // kreact preview --exit-code: the rules would act, or act otherwise
)

// ErrTestsFailed is returned by `kreact test` when a case fails; the
// report is already printed.
var ErrTestsFailed = errors.New("tests failed")

// ErrChanges is returned by `kreact preview --exit-code` when the rules
// would act (with --against, otherwise than the running version); the
// preview is already printed.
var ErrChanges = errors.New("the rules would act")

// ExitCode is the exit code of a command that returned err, which it
// prints to stderr: a mistake in what the user wrote as it is (it names
// its file:line:col), any other error after "kreact: ", and neither
// help asked for, nor failed tests, nor a preview's changes (their
// output is printed). Besides an
// InvalidError, the packages' errors of such mistakes are returned as
// they are, as kubectl's cmdutil.CheckErr takes its packages' errors: a
// diag.ErrorList (problems at their positions), an engine.NoRulesError
// (none of kreact run's rules can run), a record.LoadError and a
// finalizers.UnknownRuleError.
func ExitCode(err error, stderr io.Writer) int {
	var usage *UsageError
	var invalid *InvalidError
	var list diag.ErrorList
	var none *engine.NoRulesError
	var load *record.LoadError
	var unknown *finalizers.UnknownRuleError
	var cluster *ClusterError
	switch {
	case err == nil, errors.Is(err, ErrHelp):
		return ExitOK
	case errors.Is(err, ErrTestsFailed):
		return ExitError
	case errors.Is(err, ErrChanges):
		return ExitChanges
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "kreact: %v\n", err)
		return ExitUsage
	case errors.As(err, &invalid), errors.As(err, &list), errors.As(err, &none), errors.As(err, &load), errors.As(err, &unknown):
		fmt.Fprintf(stderr, "%v\n", err)
		return ExitInvalid
	case errors.As(err, &cluster):
		fmt.Fprintf(stderr, "kreact: %v\n", err)
		return ExitCluster
	default:
		fmt.Fprintf(stderr, "kreact: %v\n", err)
		return ExitError
	}
}
