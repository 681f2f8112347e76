package qualified

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNameKeepsShortNamesAndShortensLongOnes(t *testing.T) {
	short := strings.Repeat("a", MaxName)
	if got := Name(short); got != short {
		t.Errorf("Name(%d characters) = %q, want it unchanged", len(short), got)
	}
	ns, rule := strings.Repeat("n", 63), strings.Repeat("r", 63)
	long := ns + "." + rule
	got := Name(long)
	if len(got) != MaxName {
		t.Errorf("Name(%d characters) has %d, want %d", len(long), len(got), MaxName)
	}
	if errs := validation.IsQualifiedName("kreact.dev/" + got); len(errs) > 0 {
		t.Errorf("kreact.dev/%s is not a qualified name: %v", got, errs)
	}
	if other := Name(ns + "." + strings.Repeat("r", 62) + "s"); other == got {
		t.Errorf("two long names that share their first 54 characters give the same name %q", got)
	}
	// A name ending in a dot at the cut still gives a valid name.
	cut := strings.Repeat("x", 53) + "." + strings.Repeat("y", 20)
	if errs := validation.IsQualifiedName("kreact.dev/" + Name(cut)); len(errs) > 0 {
		t.Errorf("Name(%q) = %q is not valid: %v", cut, Name(cut), errs)
	}
}
