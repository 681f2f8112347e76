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

// InvalidError wraps problems in what the user wrote: rule files,
// resource and rule names, certificate files, test files.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }
