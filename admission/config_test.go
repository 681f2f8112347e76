package admission

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		{"url", "testdata/url.golden.yaml", Options{Name: "kreact-dev", Namespace: "kreact-dev", PodNamespace: "kreact-pod", URL: "https://127.0.0.1:8443/", CABundle: []byte("CA")}},
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
	got := Check(&res, prog, Options{}).Error()
	want := "testdata/rules.yaml:7:17: spec.watch[0]: namespaces cannot be created, updated or deleted (its verbs: get, list), so there is nothing to admit"
	if got != want {
		t.Errorf("Check = %s\nwant %s", got, want)
	}
}

// TestNeverIntercepted: kreact's own namespace is left out where kreact
// runs in it, the Service's namespace when the webhooks call the Service
// and the Pod's in a Pod, and only there; kube-system always is. Check
// refuses a rule that watches one of them, naming the rule and why.
func TestNeverIntercepted(t *testing.T) {
	rs := loadRules(t, "testdata/rules.yaml")
	prog, err := scripting.Compile("r", "function onValidate() {}", scripting.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		opts  Options
		never []string
		// errs are Check's errors for the rule's namespaces, dev and prod.
		errs []string
	}{
		{"none", Options{}, []string{"kube-system"}, nil},
		{"service", Options{Namespace: "dev"}, []string{"dev", "kube-system"}, []string{
			`testdata/rules.yaml:21:19: rule "owner-label": spec.watch[0].namespaces: dev is never intercepted, so that kreact's Pods can start while it is down: it is kreact's own namespace, its webhook Service's (a kreact outside the cluster, called at a URL instead, intercepts it)`,
		}},
		{"url outside the cluster", Options{Namespace: "dev", URL: "https://127.0.0.1:9443"}, []string{"kube-system"}, nil},
		{"url in a Pod", Options{Namespace: "dev", PodNamespace: "prod", URL: "https://10.0.0.1:9443"}, []string{"kube-system", "prod"}, []string{
			`testdata/rules.yaml:21:19: rule "owner-label": spec.watch[0].namespaces: prod is never intercepted, so that kreact's Pods can start while it is down: it is kreact's own namespace, where it runs`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := slices.Sorted(maps.Keys(tt.opts.NeverIntercepted())); !slices.Equal(got, tt.never) {
				t.Errorf("NeverIntercepted = %v, want %v", got, tt.never)
			}
			var errs []string
			for _, e := range Check(rs[1].Resolved, prog, tt.opts).Errors() {
				errs = append(errs, e.Error())
			}
			if !slices.Equal(errs, tt.errs) {
				t.Errorf("Check:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(tt.errs, "\n"))
			}
			v, _ := Configurations(rs[1:2], tt.opts)
			if got := v.Webhooks[0].NamespaceSelector.MatchExpressions[0].Values; !slices.Equal(got, tt.never) {
				t.Errorf("the webhook leaves out %v, want %v", got, tt.never)
			}
		})
	}
}

// A mutating webhook has every field of the validating one it is made
// from, and is never reinvoked.
func TestMutatingHasTheValidatingFields(t *testing.T) {
	v := hook{name: "r.kreact.dev", group: "apps", version: "v1", resource: "deployments", scope: admregv1.NamespacedScope,
		failurePolicy: new(admregv1.Fail), namespaces: &metav1.LabelSelector{}, objects: &metav1.LabelSelector{}, timeout: new(int32(5)),
	}.validating(admregv1.WebhookClientConfig{URL: new("https://127.0.0.1:8443/mutate/r")}, []admregv1.OperationType{admregv1.Create})
	v.MatchConditions = []admregv1.MatchCondition{{Name: "c", Expression: "true"}}
	m := reflect.ValueOf(mutating(v))
	for i, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
		if got, want := m.FieldByName(f.Name), reflect.ValueOf(v).Field(i); !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%s = %v, want %v", f.Name, got, want)
		}
	}
	if p := m.FieldByName("ReinvocationPolicy").Interface().(*admregv1.ReinvocationPolicyType); p == nil || *p != admregv1.NeverReinvocationPolicy {
		t.Errorf("ReinvocationPolicy = %v, want Never", p)
	}
}

// TestWriteConfigurations: kreact webhooks prints the configurations of
// the rules with admission handlers, with the rule objects' after them
// when asked, and says so on stderr when there is nothing to print.
func TestWriteConfigurations(t *testing.T) {
	rs := loadRules(t, "testdata/rules.yaml")
	opts := Options{Namespace: "kreact-system", Service: "kreact", CABundle: []byte("CA")}
	want, err := ConfigurationsYAML(rs, opts)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := RuleObjectsConfigurationYAML(opts)
	if err != nil {
		t.Fatal(err)
	}
	var warnings strings.Builder
	for _, r := range rs {
		for _, w := range Warnings(r.Resolved.Rule) {
			fmt.Fprintln(&warnings, w)
		}
	}
	if warnings.Len() == 0 {
		t.Fatal("testdata/rules.yaml has no rule with a warning: the test would not see them printed")
	}
	for _, tt := range []struct {
		name                   string
		rs                     []Rule
		ruleObjects            bool
		wantStdout, wantStderr string
	}{
		{"rules", rs, false, string(want), warnings.String()},
		{"rules and rule objects", rs, true, string(want) + string(objects), warnings.String()},
		{"rule objects only", nil, true, string(objects), ""},
		{"nothing", nil, false, "", "kreact webhooks: no rule declares onValidate or onMutate: there is nothing to print\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := WriteConfigurations(&stdout, &stderr, tt.rs, opts, tt.ruleObjects); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Errorf("stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s\nstderr:\n%s", &stdout, &stderr, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}
