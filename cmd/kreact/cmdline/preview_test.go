package cmdline

import (
	"errors"
	"testing"
)

func TestPreviewOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     PreviewOptions
		usage bool
	}{
		{"files", PreviewOptions{Files: []string{"r.yaml"}}, false},
		{"every option", PreviewOptions{Files: []string{"r.yaml"}, Against: []string{"old.yaml"}, Namespace: "shop", LabelSelector: "app=web", Output: "json"}, false},
		{"no files", PreviewOptions{Against: []string{"old.yaml"}}, true},
		{"-n and -A", PreviewOptions{Files: []string{"r.yaml"}, Namespace: "shop", AllNamespaces: true}, true},
		{"-o wide", PreviewOptions{Files: []string{"r.yaml"}, Output: "wide"}, true},
		{"a bad selector", PreviewOptions{Files: []string{"r.yaml"}, LabelSelector: "app in (web"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.o.Validate()
			var usage *UsageError
			if errors.As(err, &usage) != c.usage || (!c.usage && err != nil) {
				t.Errorf("Validate() = %v, want a usage error: %v", err, c.usage)
			}
		})
	}
}
