package cmdline

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/restmapper"
)

// The resources kreact record names resolve with the cluster's mapper: a
// misspelt one is a usage mistake naming what comes close, any other
// failure invalid input.
func TestRecordOptionsResources(t *testing.T) {
	mapper := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	o := RecordOptions{Refs: []string{"deploy", "cm"}}
	res, err := o.Resources(mapper.Resolve)
	if err != nil || len(res) != 2 || res[0].GVR.Resource != "deployments" || res[1].GVR.Resource != "configmaps" {
		t.Errorf("Resources(deploy, cm) = %v, %v; want deployments and configmaps", res, err)
	}
	o.Refs = []string{"cm", "deplyo"}
	var stderr strings.Builder
	if _, err := o.Resources(mapper.Resolve); ExitCode(err, &stderr) != ExitUsage || !strings.Contains(stderr.String(), "kreact: record: ") || !strings.Contains(stderr.String(), `did you mean "deploy"`) {
		t.Errorf("Resources(deplyo) = %v, printed %q; want a usage mistake suggesting deploy", err, stderr.String())
	}
	boom := errors.New("boom")
	if _, err := o.Resources(func(string) (apiresource.Resource, error) { return apiresource.Resource{}, boom }); ExitCode(err, io.Discard) != ExitInvalid || !errors.Is(err, boom) {
		t.Errorf("Resources with a failing mapper = %v, want invalid input", err)
	}
}
