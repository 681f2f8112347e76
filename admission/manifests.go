package admission

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// RulesOf returns the rules of resolved whose scripts declare admission
// handlers, with them, in the order of resolved. Each script's program is
// the one its check compiled (scripting.CompileRule shares it); one that
// does not compile is an error, scripting.CompileRule's diag.ErrorList.
func RulesOf(resolved []*rules.Resolved) ([]Rule, error) {
	var rs []Rule
	for _, res := range resolved {
		prog, err := scripting.CompileRule(res.Rule)
		if err != nil {
			return nil, err
		}
		if h := HandlersOf(prog); h.Any() {
			rs = append(rs, Rule{Resolved: res, Handlers: h})
		}
	}
	return rs, nil
}

// ConfigurationsYAML returns the Configurations of rs as kreact webhooks
// prints them: each of the two that has webhooks, as a YAML document
// after a "---" line; nothing when neither has any.
func ConfigurationsYAML(rs []Rule, opts Options) ([]byte, error) {
	v, m := Configurations(rs, opts)
	var out bytes.Buffer
	for _, obj := range []struct {
		hooks int
		obj   any
	}{{len(v.Webhooks), v}, {len(m.Webhooks), m}} {
		if obj.hooks == 0 {
			continue
		}
		data, err := yaml.Marshal(obj.obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}

// RuleObjectsConfigurationYAML returns RuleObjectsConfiguration(opts) as
// kreact webhooks --admission-validate-rules prints it: a YAML document
// after a "---" line.
func RuleObjectsConfigurationYAML(opts Options) ([]byte, error) {
	data, err := yaml.Marshal(RuleObjectsConfiguration(opts))
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), data...), nil
}

// WriteConfigurations is kreact webhooks: the Configurations of rs
// (ConfigurationsYAML) on stdout, with ruleObjects the rule objects'
// configuration after them (RuleObjectsConfigurationYAML), and on stderr
// the warnings of each rule (Warnings), or that there is nothing to print.
func WriteConfigurations(stdout, stderr io.Writer, rs []Rule, opts Options, ruleObjects bool) error {
	if len(rs) == 0 && !ruleObjects {
		fmt.Fprintln(stderr, "kreact webhooks: no rule declares onValidate or onMutate: there is nothing to print")
		return nil
	}
	for _, r := range rs {
		for _, w := range Warnings(r.Resolved.Rule) {
			fmt.Fprintln(stderr, w)
		}
	}
	out, err := ConfigurationsYAML(rs, opts)
	if err != nil {
		return err
	}
	if ruleObjects {
		objects, err := RuleObjectsConfigurationYAML(opts)
		if err != nil {
			return err
		}
		out = append(out, objects...)
	}
	_, err = stdout.Write(out)
	return err
}
