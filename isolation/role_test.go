package isolation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
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

// ReadRules runs what it can: the parent logs the problems of the files
// once and the child leaves them to it; with no rule left it is the
// NoRulesError that Ended reports; with no files it reads nothing.
func TestRoleReadRules(t *testing.T) {
	bad := errors.New("b.yaml:1:1: bad")
	reader := func(f engine.RuleFiles, err error) engine.Reader {
		return func(context.Context, string, []string) (engine.RuleFiles, error) { return f, err }
	}
	some := reader(engine.RuleFiles{Rules: []*rules.Rule{{Name: "a"}}, Failed: []string{"b.yaml"}, Err: bad}, nil)
	for _, tc := range []struct {
		name     string
		role     Role
		read     engine.Reader
		paths    []string
		wantErr  func(error) bool
		wantRule int
		wantLog  string // a substring of the log; "" for none
		wantSent string // what the child reports
	}{
		{name: "no files", read: func(context.Context, string, []string) (engine.RuleFiles, error) {
			t.Error("read with no paths")
			return engine.RuleFiles{}, nil
		}, wantErr: func(err error) bool { return err == nil }},
		{name: "parent logs", read: some, paths: []string{"a.yaml", "b.yaml"}, wantErr: func(err error) bool { return err == nil }, wantRule: 1, wantLog: "rules with errors are not running"},
		{name: "child does not", role: Role{Child: true}, read: some, paths: []string{"a.yaml", "b.yaml"}, wantErr: func(err error) bool { return err == nil }, wantRule: 1},
		{name: "none left", role: Role{Child: true}, read: reader(engine.RuleFiles{Err: bad}, nil), paths: []string{"b.yaml"},
			wantErr: func(err error) bool { return errors.As(err, new(*engine.NoRulesError)) && errors.Is(err, bad) }, wantSent: `"invalid":"b.yaml:1:1: bad"`},
		{name: "interrupted", read: reader(engine.RuleFiles{}, context.Canceled), paths: []string{"a.yaml"}, wantErr: func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log, sent bytes.Buffer
			if tc.role.Child {
				tc.role.Reporter = &Reporter{w: nopCloser{&sent}}
			}
			files, err := tc.role.ReadRules(t.Context(), tc.read, tc.paths, slog.New(slog.NewTextHandler(&log, nil)))
			if !tc.wantErr(err) || len(files.Rules) != tc.wantRule {
				t.Errorf("ReadRules = %d rules, %v", len(files.Rules), err)
			}
			if got := log.String(); (tc.wantLog == "") != (got == "") || !strings.Contains(got, tc.wantLog) {
				t.Errorf("logged %q, want %q", got, tc.wantLog)
			}
			if got := sent.String(); (tc.wantSent == "") != (got == "") || !strings.Contains(got, tc.wantSent) {
				t.Errorf("reported %q, want %q", got, tc.wantSent)
			}
		})
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
