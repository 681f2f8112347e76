package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/restmapper"
)

// TestHugeResourceNames: a 1 MB resource name in spec.watch, spec.reads or
// spec.permissions is refused by the mapper before any did-you-mean work
// (it used to take 11.5 s of CPU), each with a positioned error that quotes
// only the name's start.
func TestHugeResourceNames(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	src := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch: [{resource: " + huge + "}]\n" +
		"  reads: [" + huge + "y]\n  permissions: [{resources: [" + huge + "z], verbs: [patch]}]\n  script: x\n"
	r := mustParse(t, src)
	_, err := r.Resolve(restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}))
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("Resolve = %.3000v, want 3 errors", err)
	}
	for i, want := range []string{"r.yaml:5:22: spec.watch[0].resource: ", "r.yaml:6:11: spec.reads[0]: ", "r.yaml:7:30: spec.permissions[0].resources[0]: "} {
		got := list[i].Error()
		quoted := want + `"` + strings.Repeat("x", diag.MaxQuoted) + `…": invalid resource reference: `
		if !strings.HasPrefix(got, quoted) || !strings.HasSuffix(got, " bytes, over the limit of 512") || len(got) > 300 {
			t.Errorf("error %d = %.400s\nwant %s\"xxx…\": invalid resource reference: … bytes, over the limit of 512", i, got, want)
		}
	}
}
