package cmdline

import "errors"

// ErrHelp is returned by FlagSet.Parse when --help was asked for; the
// usage is printed.
var ErrHelp = errors.New("help requested")

// UsageError is a mistake in the command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ClusterError wraps failures to configure or reach the API server.
type ClusterError struct{ Err error }

func (e *ClusterError) Error() string { return e.Err.Error() }
func (e *ClusterError) Unwrap() error { return e.Err }
