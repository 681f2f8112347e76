package admission

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// loadRules parses and resolves the rules of file against the built-in
// resources, with their admission handlers.
func loadRules(t *testing.T, file string) []Rule {
	t.Helper()
	rs, err := rules.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	var resolved []*rules.Resolved
	for _, r := range rs {
		res, err := r.Resolve(mapper)
		if err != nil {
			t.Fatal(err)
		}
		resolved = append(resolved, res)
	}
	out, err := RulesOf(resolved)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConfigurationsGolden(t *testing.T) {
	rs := loadRules(t, "testdata/rules.yaml")
	for _, tt := range []struct {
		name, golden string
		opts         Options
	}{
		{"service", "testdata/service.golden.yaml", Options{Namespace: "kreact-system", Service: "kreact", CABundle: []byte("CA")}},
		{"url", "testdata/url.golden.yaml", Options{Name: "kreact-dev", Namespace: "kreact-dev", Exclude: []string{"leases-here"}, URL: "https://127.0.0.1:8443/", CABundle: []byte("CA")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigurationsYAML(rs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(tt.golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tt.golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("configurations differ from %s (run with -update to accept):\n%s", tt.golden, got)
			}
		})
	}
}

func TestConfigurationsEmpty(t *testing.T) {
	v, m := Configurations(nil, Options{})
	if v.Name != "kreact" || m.Name != "kreact" || len(v.Webhooks) != 0 || len(m.Webhooks) != 0 {
		t.Errorf("Configurations(nil) = %+v, %+v; want two empty configurations named kreact", v, m)
	}
	if out, err := ConfigurationsYAML(nil, Options{}); err != nil || len(out) != 0 {
		t.Errorf("ConfigurationsYAML(nil) = %q, %v; want nothing", out, err)
	}
}

func TestCheckVerbs(t *testing.T) {
	rs := loadRules(t, "testdata/rules.yaml")
	res := *rs[0].Resolved
	res.Watch = slices.Clone(res.Watch)
	res.Watch[0].Resource.Verbs = []string{"get", "list"}
	prog, err := scripting.Compile("r", "function onValidate() {}", scripting.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := Check(&res, prog).Error()
	want := "testdata/rules.yaml:7:17: spec.watch[0]: namespaces cannot be created, updated or deleted (its verbs: get, list), so there is nothing to admit"
	if got != want {
		t.Errorf("Check = %s\nwant %s", got, want)
	}
}
