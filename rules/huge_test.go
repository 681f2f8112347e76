package rules

import (
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
)

// TestHugeValuesAreNotEchoed: a huge rule name (the was 10 MB; 1 MB
// keeps the test quick), and other huge values a user wrote, appear in
// error messages cut to diag.MaxQuoted bytes.
func TestHugeValuesAreNotEchoed(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	const bound = 1000
	doc := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: " + huge + "\nspec:\n  watch: [{resource: pods, labelSelector: '" + huge +
		"'}]\n  " + strings.Repeat("x", 1000) + ": 1\n  http: ['ftp://" + huge + "']\n  schedule: '" + huge + "'\n  script: 'function onAdd() {}'\n"
	_, err := Parse("huge.yaml", []byte(doc))
	list, ok := err.(diag.ErrorList)
	if !ok || len(list) < 4 {
		t.Fatalf("Parse = %v, want at least 4 errors", err)
	}
	for _, e := range list {
		if len(e.Error()) > bound || !strings.Contains(e.Msg, "x…") {
			t.Errorf("a message of %d bytes, want it under %d bytes and the value cut with …: %.300s", len(e.Error()), bound, e.Error())
		}
	}

	r := &Rule{Name: "r", HTTP: []string{"http://h/"}}
	for _, u := range []string{"http://h/" + huge + "%zz", "ftp://" + huge, "http://h/a/../" + huge} {
		err := r.AllowsHTTP(u)
		if err == nil || len(err.Error()) > bound || !strings.Contains(err.Error(), "x…") {
			t.Errorf("AllowsHTTP of a 10 MB URL: %d bytes: %.300v", len(errString(err)), err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
