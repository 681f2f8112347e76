package record

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/clientstack"
)

// A preview's diffs are the API server's answers to the dry-run writes
// that package actions sends for kreact run's actions: what the server
// would make of each (server-side apply's merge, defaults, mutating
// admission), which no local computation matches. The action queue does
// not decode those answers (see actions.Queue's write), so the preview's
// engine writes through a client whose transport keeps them.

// dryRunWrite is one dry-run write the engine sent, and the answer.
type dryRunWrite struct {
	method, path string
	body         []byte
	status       int
	answer       []byte
	used         bool
}

// capture is an http.RoundTripper that keeps the dry-run writes that go
// through it. Safe for concurrent use.
type capture struct {
	next http.RoundTripper

	mu     sync.Mutex
	writes []*dryRunWrite
}

// captureClient returns a REST client of cfg, as the engine's actions
// write through (clientstack.RESTClient), that keeps its dry-run writes
// in the returned capture.
func captureClient(cfg *rest.Config) (rest.Interface, *capture, error) {
	c := &capture{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		c.next = rt
		return c
	})
	rc, err := clientstack.RESTClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	return rc, c, nil
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || !slices.Contains(req.URL.Query()["dryRun"], metav1.DryRunAll) {
		return c.next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	if err != nil {
		return resp, nil // the client reads the same error from the body
	}
	c.mu.Lock()
	c.writes = append(c.writes, &dryRunWrite{method: req.Method, path: req.URL.Path, body: body, status: resp.StatusCode, answer: answer})
	c.mu.Unlock()
	return resp, nil
}

// answer returns the object the API server answered the dry-run write of
// a with, or nil: for a create, apply or patch, the write with a's
// request body; for a condition, the next write to its path (its body is
// made when it executes). The first successful write that fits is taken,
// and those before it (failed attempts of the same action) with it, so
// that the next action of the same body gets the next write.
func (c *capture) answer(a actions.Action) *unstructured.Unstructured {
	method, body := http.MethodPatch, a.PatchData
	switch a.Verb {
	case actions.Create, actions.Apply:
		if a.Verb == actions.Create {
			method = http.MethodPost
		}
		var err error
		if body, err = json.Marshal(a.Object); err != nil {
			return nil
		}
	case actions.Patch:
	case actions.SetCondition:
		body = nil
	default:
		return nil
	}
	name := a.Name
	if a.Verb == actions.Create {
		name = ""
	}
	path := "/" + strings.Join(apiresource.Path(a.Resource, a.Namespace, name, a.Subresource), "/")
	c.mu.Lock()
	defer c.mu.Unlock()
	var tried []*dryRunWrite
	for _, w := range c.writes {
		if w.used || w.method != method || !strings.HasSuffix(w.path, path) || (body != nil && !bytes.Equal(w.body, body)) {
			continue
		}
		tried = append(tried, w)
		if w.status/100 != 2 {
			continue
		}
		for _, t := range tried {
			t.used = true
		}
		var obj unstructured.Unstructured
		if err := obj.UnmarshalJSON(w.answer); err != nil || obj.GetKind() == "Status" {
			return nil
		}
		return &obj
	}
	return nil
}
