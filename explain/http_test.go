package explain

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// Ask gets the Object a Source answers, and the kinds of its errors.
func TestAskAndHandler(t *testing.T) {
	srv := httptest.NewServer(Handler(func(_ context.Context, ref, namespace, name string) (*Object, error) {
		switch {
		case ref == "configmapz":
			return nil, fmt.Errorf("%w: resource %q not found; did you mean configmaps?", ErrUnknownResource, ref)
		case name == "nope":
			return nil, fmt.Errorf("%w: configmaps %q", ErrNotFound, name)
		}
		return &Object{Resource: ref, Namespace: namespace, Name: name, Exists: true, Rules: []Rule{{Name: "r", Watched: true}}}, nil
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	o, err := Ask(t.Context(), addr, "configmaps", "shop", "web")
	if err != nil || o.Name != "web" || o.Namespace != "shop" || len(o.Rules) != 1 || !o.Rules[0].Watched {
		t.Errorf("Ask = %+v, %v", o, err)
	}
	if _, err := Ask(t.Context(), addr, "configmapz", "", "web"); !errors.Is(err, ErrUnknownResource) || !strings.Contains(err.Error(), "did you mean configmaps?") || strings.Count(err.Error(), "unknown resource") != 1 {
		t.Errorf("Ask of an unknown resource = %v", err)
	}
	if _, err := Ask(t.Context(), addr, "configmaps", "", "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Ask of a missing object = %v", err)
	}
	srv.Close()
	if _, err := Ask(t.Context(), addr, "configmaps", "", "web"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Ask of no server = %v", err)
	}
}
