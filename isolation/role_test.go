package isolation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/kreact/kreact/engine"
)

// The environment that Command sets makes the child's role: the replica
// it is part of, and its report descriptor.
func TestRoleOf(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	if r, err := RoleOf(env(map[string]string{ReplicaEnv: "web-0"})); err != nil || r.Child || r.Replica != "" {
		t.Errorf("without %s: %+v, %v; want kreact run's own role", ChildEnv, r, err)
	}
	r, err := RoleOf(env(map[string]string{ChildEnv: "1", ReplicaEnv: "web-0"}))
	if err != nil || !r.Child || r.Replica != "web-0" || r.Reporter != nil {
		t.Errorf("child: %+v, %v; want the child of web-0, reporting nothing", r, err)
	}
	if _, err := RoleOf(env(map[string]string{ChildEnv: "1", ReportFDEnv: "x"})); err == nil {
		t.Error("a report descriptor that is not one: no error")
	}
	loaded := 0
	r.Loaded(func(n int) { loaded = n })(3)
	if loaded != 3 {
		t.Errorf("Loaded told %d, want 3", loaded)
	}
}

// Ended tells the parent why none of the child's rules can run, and
// nothing of any other end.
func TestRoleEnded(t *testing.T) {
	var out bytes.Buffer
	r := Role{Child: true, Reporter: &Reporter{w: nopCloser{&out}}}
	if err := r.Ended(errors.New("interrupted")); err == nil || out.Len() > 0 {
		t.Errorf("Ended(interrupted) = %v, reported %q; want the error, no report", err, out.String())
	}
	none := &engine.NoRulesError{Err: errors.New("r.yaml:1:1: bad")}
	if err := r.Ended(fmt.Errorf("run: %w", none)); !errors.Is(err, none) || out.String() != `{"running":0,"invalid":"run: r.yaml:1:1: bad"}`+"\n" {
		t.Errorf("Ended(no rules) = %v, reported %q; want the error, reported", err, out.String())
	}
	if err := (Role{}).Ended(none); err != none {
		t.Errorf("outside the child, Ended = %v", err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
