package admission

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
)

// TestLogLoad: each problem of the server's load is logged
// as what it is, with the rule it concerns; a load without problems logs
// nothing (issue 37: a broken rule file, even with no admission rule at
// all, was logged as rules not served).
func TestLogLoad(t *testing.T) {
	var rule diag.ErrorList
	rule.Addf(diag.Position{File: "r.yaml", Line: 7, Col: 17, Rule: "owner"}, "spec.watch[0].resource: \"confgimaps\": no such resource")
	err := errors.Join(rule, &NotAppliedError{Err: errors.New("admission: apply webhook configurations: forbidden")},
		errors.New("admission: listen: address in use"))
	for _, tt := range []struct {
		err  error
		want []string
	}{
		{nil, nil},
		{err, []string{
			`level=ERROR msg="admission: rule not served" rule=owner error="r.yaml:7:17: spec.watch[0].resource: \"confgimaps\": no such resource"`,
			`level=ERROR msg="admission: webhook configurations not applied" error="admission: apply webhook configurations: forbidden"`,
			`level=ERROR msg="admission: rules not served" error="admission: listen: address in use"`,
		}},
	} {
		var out strings.Builder
		LogLoad(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})), tt.err)
		if got, want := strings.TrimSpace(out.String()), strings.Join(tt.want, "\n"); got != want {
			t.Errorf("logged:\n%s\nwant:\n%s", got, want)
		}
	}
}
