package ruletest_test

import (
	"context"
	"fmt"

	"github.com/kreact/kreact/ruletest"
)

// Load a test file and run its cases one by one.
func ExampleLoadFile() {
	f, err := ruletest.LoadFile("testdata/pass.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rules:", f.Rules())
	for _, r := range f.Run(context.Background()) {
		fmt.Printf("%s: passed=%v, %d actions\n", r.Case.Name, r.Passed(), len(r.Actions))
	}
	// Output:
	// rules: [labelled named]
	// add in a watched namespace with matching labels: passed=true, 2 actions
	// adds the watch does not see: passed=true, 0 actions
	// updates of ignored fields only are not delivered: passed=true, 0 actions
	// an update reports what changed: passed=true, 1 actions
	// labels that stop matching are a delete of the old version: passed=true, 1 actions
	// labels that start matching are an add: passed=true, 2 actions
	// a field selector on metadata.name: passed=true, 1 actions
}
