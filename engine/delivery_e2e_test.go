//go:build e2e

package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
)

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// givenUpCounter is an engine.Observer that counts given-up calls.
type givenUpCounter struct{ n chan string }

var _ engine.Observer = (*givenUpCounter)(nil)

func (c *givenUpCounter) ActionResult(actions.Result)                          {}
func (c *givenUpCounter) Event(string, string, event.Type)                     {}
func (c *givenUpCounter) HandlerCall(string, event.Type, time.Duration, error) {}
func (c *givenUpCounter) ChangesDropped(string, int)                           {}
func (c *givenUpCounter) HandlerGivenUp(rule string, _ event.Type, err error) {
	c.n <- rule + ": " + err.Error()
}

// copySecretRule applies a copy of each Secret named "shared" in the
// source namespace to every namespace labelled copy-to, in one call.
func copySecretRule(name, source string, maxActions string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: secrets
      namespaces: [%s]
  events: [add]
  reads: [namespaces]
  permissions:
    - resources: [secrets]
      verbs: [apply]
      namespaces: ["*"]
  retries: 1
  %s
  rateLimit: 1000
  # A call over many namespaces on a loaded machine must fail on its
  # actions, not on the default 1s timeout.
  timeout: 30s
  script: |
    function onAdd(secret) {
      for (const ns of kreact.list("namespaces", {labelSelector: "copy-to=%s"})) {
        kreact.apply({apiVersion: "v1", kind: "Secret",
          metadata: {name: secret.metadata.name, namespace: ns.metadata.name},
          data: secret.data});
      }
    }
`, name, source, maxActions, name)
}

// A handler call is a transaction: with spec.maxActions above the number of
// targets, one call copies a Secret to 150 namespaces; with the default
// limit of 100, the call fails before queueing anything, is retried, given
// up, logged and counted, and no copy is made.
func TestActionLimitIsPerCallAndTransactional(t *testing.T) {
	const targets = 150
	obs := &givenUpCounter{n: make(chan string, 10)}
	h := start(t, engine.Options{Observer: obs})
	for _, rule := range []string{"copy-big", "copy-default"} {
		h.namespace(rule + "-src")
		for i := range targets {
			ns := fmt.Sprintf("%s-%03d", rule, i)
			h.namespace(ns)
			o, err := h.client.Resource(namespaces).Get(t.Context(), ns, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			o.SetLabels(map[string]string{"copy-to": rule})
			if _, err := h.client.Resource(namespaces).Update(t.Context(), o, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.mustLoad(copySecretRule("copy-big", "copy-big-src", "maxActions: 200") + "---\n" + copySecretRule("copy-default", "copy-default-src", ""))

	secret := func(ns string) *unstructured.Unstructured {
		s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"k": "dg=="}}}
		s.SetNamespace(ns)
		s.SetName("shared")
		return s
	}
	for _, ns := range []string{"copy-big-src", "copy-default-src"} {
		if _, err := h.client.Resource(secrets).Namespace(ns).Create(t.Context(), secret(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	copies := func(rule string) int {
		list, err := h.client.Resource(secrets).List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=shared"})
		if err != nil {
			return -1
		}
		n := 0
		for _, s := range list.Items {
			if strings.HasPrefix(s.GetNamespace(), rule+"-") && s.GetNamespace() != rule+"-src" {
				n++
			}
		}
		return n
	}
	testcluster.Eventually(t, "150 copies by copy-big", func() bool { return copies("copy-big") == targets })

	select {
	case msg := <-obs.n:
		if !strings.HasPrefix(msg, "copy-default: ") || !strings.Contains(msg, "more than 100 actions in one call") {
			t.Errorf("given up: %q", msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("copy-default's call was not given up")
	}
	if !strings.Contains(h.logs.String(), `msg="handler call given up" rule=copy-default`) {
		t.Error("no log line for the given-up call")
	}
	if n := copies("copy-default"); n != 0 {
		t.Errorf("copy-default made %d copies; a failed call must queue none", n)
	}
}
