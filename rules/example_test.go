package rules_test

import (
	"fmt"

	"github.com/kreact/kreact/rules"
)

func ExampleParse() {
	src := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: log-pods
spec:
  watch:
    - resource: pods
      namespaces: [default]
  events: [add, delete]
  script: |
    function onAdd(obj, ctx) { ctx.log("added " + obj.metadata.name) }
    function onDelete(obj, ctx) { ctx.log("deleted " + obj.metadata.name) }
`
	rs, err := rules.Parse("pods.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rs[0]
	fmt.Println(r.Name, r.Watch[0].Resource, r.Watch[0].Namespaces, r.Events)
	fmt.Println("workers", r.Workers, "timeout", r.Timeout, "rate", r.RateLimit, "burst", r.Burst)
	// A JavaScript error at line 2, column 31 of the script:
	fmt.Println(r.ScriptPosition(2, 31))
	// Output:
	// log-pods pods [default] [add delete]
	// workers 1 timeout 1s rate 10 burst 20
	// pods.yaml:12:35
}

func ExampleParse_errors() {
	src := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: Bad_Name
spec:
  watch:
    - resource: pods
      labelSelector: "app in (web"
  timeout: 5
  scirpt: "function onAdd() {}"
`
	_, err := rules.Parse("bad.yaml", []byte(src))
	fmt.Println(err)
	// Output:
	// bad.yaml:4:9: metadata.name: invalid name "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
	// bad.yaml:5:1: missing required field "spec.script" or "spec.scriptFile"
	// bad.yaml:8:22: spec.watch[0].labelSelector: invalid label selector "app in (web": unable to parse requirement: found '', expected: ',' or ')'
	// bad.yaml:9:12: spec.timeout: 5 has no unit; write a duration such as "500ms", "2s" or "1m"
	// bad.yaml:10:3: unknown field "spec.scirpt" (did you mean "script"?)
}

func ExampleLoad() {
	rs, err := rules.Load("testdata/valid")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs {
		fmt.Println(r)
	}
	// Output:
	// restart-on-config-change (testdata/valid/full.yaml:5:9)
	// log-pods (testdata/valid/minimal.yaml:4:9)
	// label-new-namespaces (testdata/valid/multi.yaml:5:9)
	// relabel-namespaces (testdata/valid/multi.yaml:18:9)
}
