//go:build e2e

package main

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestWatchFollowsACRDThroughItsLife starts `kreact watch` on a kind whose
// CRD does not exist yet, then installs, deletes and reinstalls the CRD.
func TestWatchFollowsACRDThroughItsLife(t *testing.T) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	crd := testcluster.CRD{Group: "watch.kreact.dev", Kind: "Sprocket", Plural: "sprockets", ShortNames: []string{"spr"}}
	c := startCLI(t, "watch", "sprockets.watch.kreact.dev", "-A", "--kubeconfig", cluster.KubeconfigPath())
	testcluster.Eventually(t, "the watch to report it is waiting", func() bool {
		return strings.Contains(c.stderr.String(), "waiting for it to appear")
	})

	createSprocket := func(name string) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "watch.kreact.dev/v1", "kind": "Sprocket", "metadata": map[string]any{"name": name, "namespace": "default"}}}
		testcluster.Eventually(t, "sprocket "+name+" to be created", func() bool {
			_, err := dyn.Resource(crd.GVR()).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err)
		})
	}
	if err := testcluster.CreateCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	createSprocket("first")
	testcluster.Eventually(t, "ADDED default/first", func() bool {
		return strings.Contains(c.stdout.String(), "ADDED     sprockets.watch.kreact.dev  default/first")
	})

	if err := testcluster.DeleteCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the watch to say the resource is gone", func() bool {
		return strings.Contains(c.stderr.String(), "resource no longer served")
	})
	// The spec asks for quiet logs for 30s after the CRD is gone: no 404
	// retry loop. This counts lines; it asserts nothing about timing.
	before := c.stderr.String()
	time.Sleep(30 * time.Second)
	after := strings.TrimPrefix(c.stderr.String(), before)
	if n := strings.Count(after, "level=WARN") + strings.Count(after, "level=ERROR"); n > 0 {
		t.Errorf("%d warnings or errors in the 30s after the CRD was deleted:\n%s", n, after)
	}
	if n := strings.Count(c.stderr.String(), "resource no longer served"); n != 1 {
		t.Errorf("the removal was logged %d times, want once", n)
	}

	if err := testcluster.CreateCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	createSprocket("second")
	testcluster.Eventually(t, "ADDED default/second after the CRD came back", func() bool {
		return strings.Contains(c.stdout.String(), "default/second")
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact watch exited %d after Ctrl-C, want 0", code)
	}
}

func TestWatchRejectsUnknownResourcesWithSuggestions(t *testing.T) {
	c := startCLI(t, "watch", "configmpas", "--kubeconfig", cluster.KubeconfigPath())
	// An unknown name may be a CRD not installed yet, so kreact waits for
	// it, but says what it would have meant (quotes are escaped in the log).
	testcluster.Eventually(t, "a did-you-mean hint", func() bool {
		return strings.Contains(c.stderr.String(), `did you mean \"configmaps\"`) &&
			strings.Contains(c.stderr.String(), "waiting for it to appear")
	})
}
