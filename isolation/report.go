package isolation

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// ReportFDEnv names, in the environment of the isolated rules' process,
// the file descriptor on which it reports to the kreact run that started
// it (a pipe the Supervisor passes as an extra file).
const ReportFDEnv = "KREACT_ISOLATED_REPORT_FD"

// report is what the isolated rules' process tells its parent, one JSON
// object per line: after each of its loads, how many rules it runs; and,
// before it exits because none of its rules can run, why.
type report struct {
	Running int `json:"running"`
	// Invalid is the problems of every rule, set when none can run.
	Invalid string `json:"invalid,omitempty"`
}

// Reporter is the isolated rules' process's side of its reports. A nil
// Reporter, outside that process, reports nothing. Its methods are safe
// for concurrent use.
type Reporter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

// OpenReporter opens the descriptor that ReportFDEnv names in getenv, or
// returns nil if it names none.
func OpenReporter(getenv func(string) string) (*Reporter, error) {
	v := getenv(ReportFDEnv)
	if v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, errors.New("isolated rules: " + ReportFDEnv + " is not a file descriptor: " + strconv.Quote(v))
	}
	// Not handed on to anything this process starts, so that the pipe
	// ends when this process does.
	syscall.CloseOnExec(fd)
	return &Reporter{w: os.NewFile(uintptr(fd), "kreact run's reports")}, nil
}

// Loaded reports that the process runs n rules, after a load.
func (r *Reporter) Loaded(n int) { r.send(report{Running: n}) }

// Invalid reports that none of the process's rules can run, and why; the
// process exits after it.
func (r *Reporter) Invalid(err error) { r.send(report{Invalid: err.Error()}) }

func (r *Reporter) send(m report) {
	if r == nil {
		return
	}
	line, _ := json.Marshal(m)
	r.mu.Lock()
	defer r.mu.Unlock()
	// A parent that stopped reading is gone or going: nothing to do.
	_, _ = r.w.Write(append(line, '\n'))
}
