package actions

import (
	"slices"
	"testing"
)

func TestVerbTable(t *testing.T) {
	for _, tt := range []struct {
		verb    Verb
		request string
		granted []string
	}{
		{Create, "create", []string{"create"}},
		// Server-side apply is a PATCH that may create the object.
		{Apply, "patch", []string{"create", "patch"}},
		{Patch, "patch", []string{"patch"}},
		{Delete, "delete", []string{"delete"}},
		// A condition's target is RESOURCE/status, where it has one.
		{SetCondition, "", []string{"get", "patch"}},
		// Neither asks anything of its own resource.
		{Event, "", nil},
		{HTTP, "", nil},
	} {
		if got := tt.verb.RequestVerb(); got != tt.request {
			t.Errorf("%s.RequestVerb() = %q, want %q", tt.verb, got, tt.request)
		}
		if got := tt.verb.APIVerbs(); !slices.Equal(got, tt.granted) {
			t.Errorf("%s.APIVerbs() = %q, want %q", tt.verb, got, tt.granted)
		}
	}
}
