//go:build e2e

package clientstack_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestRefreshFindsANewResource: a resource created after the stack's
// discovery is not Served until Refresh asks the API server again.
func TestRefreshFindsANewResource(t *testing.T) {
	stack, err := clientstack.New(t.Context(), cluster.Config(), clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if !stack.Served(configMapsGVR) {
		t.Errorf("configmaps are not served")
	}
	crd := testcluster.CRD{Group: "served.kreact.dev", Kind: "Sprocket", Plural: "sprockets"}
	if err := testcluster.CreateCRD(t.Context(), stack.Client, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), stack.Client, crd) })
	if stack.Served(crd.GVR()) {
		t.Errorf("a resource created after discovery is served before Refresh")
	}
	testcluster.Eventually(t, "Refresh to find the new resource", func() bool { return stack.Refresh(t.Context()) && stack.Served(crd.GVR()) })
}
