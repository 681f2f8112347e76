package cmdline

import "testing"

func TestNamespaceFor(t *testing.T) {
	for _, tt := range []struct {
		flag      string
		all       bool
		contextNS string
		want      string
	}{
		{"", false, "ctx", "ctx"},
		{"team-a", false, "ctx", "team-a"},
		{"", true, "ctx", ""},
		{"team-a", true, "ctx", ""},
	} {
		if got := NamespaceFor(tt.flag, tt.all, tt.contextNS); got != tt.want {
			t.Errorf("NamespaceFor(%q, %v, %q) = %q, want %q", tt.flag, tt.all, tt.contextNS, got, tt.want)
		}
	}
}
