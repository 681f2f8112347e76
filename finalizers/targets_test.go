package finalizers

import (
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/restmapper"
)

func builtinMapper() *restmapper.Mapper {
	return restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
}

// Each resource is scanned once whatever it is called; namespaced ones in
// the namespace asked for, cluster-scoped ones everywhere.
func TestTargets(t *testing.T) {
	targets, err := Targets(builtinMapper(), []string{"secrets", "secret", "namespaces", "cm"}, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range targets {
		if tg.LabelSelector != "" {
			t.Errorf("%s has selector %q; want none", tg.Resource.GVR, tg.LabelSelector)
		}
		got = append(got, tg.Resource.GVR.Resource+"@"+tg.Namespace)
	}
	if want := []string{"secrets@team-a", "namespaces@", "configmaps@team-a"}; !slices.Equal(got, want) {
		t.Errorf("targets = %q, want %q", got, want)
	}
}

func TestTargetsReportsEveryUnknownName(t *testing.T) {
	targets, err := Targets(builtinMapper(), []string{"secrts", "configmaps", "bk"}, "")
	if err == nil || targets != nil {
		t.Fatalf("Targets = %v, %v; want no targets and an error", targets, err)
	}
	for _, want := range []string{`"secrts": no such resource; did you mean "secrets"?`, `"bk": no such resource`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}
