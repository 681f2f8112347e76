package explain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestAddress(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, tc := range []struct{ name, flag, env, want string }{
		{"flag", "127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9000"},
		{"environment", "", "127.0.0.1:9001", "127.0.0.1:9001"},
		{"default", "", "", DefaultAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Address(tc.flag, env(tc.env)); got != tc.want {
				t.Errorf("Address = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOnlyAndWrite(t *testing.T) {
	o := &Object{Resource: "configmaps", Namespace: "shop", Name: "web", Rules: []Rule{{Name: "a"}, {Name: "b"}}}
	if o.Only("c") || !slices.Equal(o.RuleNames(), []string{"a", "b"}) {
		t.Errorf("Only(c) kept %q, want a and b left as they were", o.RuleNames())
	}
	if !o.Only("b") || !slices.Equal(o.RuleNames(), []string{"b"}) {
		t.Errorf("Only(b) kept %q", o.RuleNames())
	}
	for _, format := range []string{"json", "yaml", ""} {
		var out bytes.Buffer
		if err := o.Write(&out, format); err != nil {
			t.Fatalf("%q: %v", format, err)
		}
		var back Object
		switch format {
		case "json":
			if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Name != "web" || len(back.Rules) != 1 {
				t.Errorf("json: %v, %+v from\n%s", err, back, out.String())
			}
		case "yaml":
			if err := yaml.Unmarshal(out.Bytes(), &back); err != nil || back.Name != "web" || len(back.Rules) != 1 {
				t.Errorf("yaml: %v, %+v from\n%s", err, back, out.String())
			}
		default:
			var text bytes.Buffer
			o.WriteText(&text)
			if out.String() != text.String() || !strings.Contains(out.String(), "web") {
				t.Errorf("text:\n%s\nwant WriteText's:\n%s", out.String(), text.String())
			}
		}
	}
}
