package isolation

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenReporter(t *testing.T) {
	for _, tc := range []struct {
		name, fd string
		wantErr  bool
	}{
		{name: "outside the isolated process", fd: ""},
		{name: "not a number", fd: "three", wantErr: true},
		{name: "standard error", fd: "2", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := OpenReporter(func(k string) string {
				if k == ReportFDEnv {
					return tc.fd
				}
				return ""
			})
			if (err != nil) != tc.wantErr || r != nil {
				t.Fatalf("OpenReporter = %v, %v; want no reporter, error %v", r, err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), ReportFDEnv) {
				t.Errorf("the error %q does not name %s", err, ReportFDEnv)
			}
			// Outside the isolated process, reports go nowhere.
			r.Loaded(1)
			r.Invalid(errors.New("no rules"))
		})
	}
}
