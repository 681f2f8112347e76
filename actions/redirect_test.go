package actions_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// hits records the requests a test server received.
type hits struct {
	mu   sync.Mutex
	list []string // "METHOD PATH body=BODY secret=HEADER"
}

func (h *hits) add(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, r.Method+" "+r.URL.EscapedPath()+" body="+string(body)+" secret="+r.Header.Get("X-Secret"))
}

func (h *hits) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.list...)
}

// TestHTTPRedirectsStayOnTheAllowList: with spec.http allowing
// http://127.0.0.1:P/ok/ (and another server's /also/), an HTTP action
// follows a redirect only to an allowed URL, and a 307 or 308 only within
// its origin. A refused redirect fails the action for good, and its target
// receives nothing: no request, so no body and no header.
func TestHTTPRedirectsStayOnTheAllowList(t *testing.T) {
	var mainHits, otherHits hits
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.add(r) }))
	defer other.Close()
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mainHits.add(r)
		to, code := "", 0
		switch r.URL.Path {
		case "/ok/other-port":
			to, code = other.URL+"/ok/x", http.StatusFound
		case "/ok/admin":
			to, code = "/admin", http.StatusFound
		case "/ok/admin-307":
			to, code = "/admin", http.StatusTemporaryRedirect
		case "/ok/other-port-307":
			to, code = other.URL+"/ok/x", http.StatusTemporaryRedirect
		case "/ok/also-307":
			to, code = other.URL+"/also/x", http.StatusTemporaryRedirect
		case "/ok/also-308":
			to, code = other.URL+"/also/x", http.StatusPermanentRedirect
		case "/ok/backslash":
			to, code = `/ok/..\admin`, http.StatusFound
		case "/ok/loop":
			to, code = "/ok/loop", http.StatusFound
		case "/ok/also-302":
			to, code = other.URL+"/also/x", http.StatusFound
		case "/ok/same-307":
			to, code = "/ok/final", http.StatusTemporaryRedirect
		}
		if to != "" {
			http.Redirect(w, r, to, code)
		}
	}))
	defer main.Close()
	rule := &rules.Rule{Name: "hook", HTTP: []string{main.URL + "/ok/", other.URL + "/also/"}}

	tests := []struct {
		path      string
		want      actions.Outcome
		mainWant  []string // the requests main receives, the first one excluded
		otherWant []string
	}{
		{path: "/ok/other-port", want: actions.Failed},
		{path: "/ok/admin", want: actions.Failed},
		{path: "/ok/admin-307", want: actions.Failed},
		{path: "/ok/other-port-307", want: actions.Failed},
		{path: "/ok/also-307", want: actions.Failed}, // allowed, but the body would go to another origin
		{path: "/ok/also-308", want: actions.Failed},
		{path: "/ok/backslash", want: actions.Failed},
		{path: "/ok/loop", want: actions.Failed, mainWant: slicesRepeat("GET /ok/loop body= secret=s3cret", 9)},
		// Allowed hops are followed: a 302 becomes a GET without the body;
		// a 307 within the origin keeps the method and the body.
		{path: "/ok/also-302", want: actions.Succeeded, otherWant: []string{"GET /also/x body= secret=s3cret"}},
		{path: "/ok/same-307", want: actions.Succeeded, mainWant: []string{"POST /ok/final body=payload secret=s3cret"}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/ok/"), func(t *testing.T) {
			mainHits.mu.Lock()
			mainHits.list = nil
			mainHits.mu.Unlock()
			otherHits.mu.Lock()
			otherHits.list = nil
			otherHits.mu.Unlock()

			q, res, logs := startWebhookQueue(t, actions.Options{Name: "redirects", Retries: 2, AllowURL: rule.AllowsHTTP})
			q.Enqueue(actions.Action{Rule: "hook", Verb: actions.HTTP, Request: &actions.HTTPRequest{
				URL: main.URL + tt.path, Method: http.MethodPost, Body: []byte("payload"),
				Headers: map[string]string{"X-Secret": "s3cret"},
			}})
			testcluster.Eventually(t, "the action to end", func() bool {
				return res.count(actions.Failed)+res.count(actions.Succeeded)+res.count(actions.GaveUp) > 0
			})
			if got := res.count(tt.want); got != 1 {
				t.Errorf("%s outcomes = %d, want 1", tt.want, got)
			}
			if tt.want == actions.Failed && logs.Count("redirect to ") == 0 {
				t.Errorf("no log line says which redirect was refused")
			}
			got := mainHits.get()
			if len(got) == 0 || got[0] != "POST "+tt.path+" body=payload secret=s3cret" {
				t.Fatalf("main server got %q, want the action's request first", got)
			}
			if !equal(got[1:], tt.mainWant) {
				t.Errorf("main server then got %q, want %q", got[1:], tt.mainWant)
			}
			if got := otherHits.get(); !equal(got, tt.otherWant) {
				t.Errorf("other server got %q, want %q", got, tt.otherWant)
			}
		})
	}
}

// TestHTTPRedirectsRefusedWithoutAllowURL: a queue without AllowURL
// follows no redirect at all.
func TestHTTPRedirectsRefusedWithoutAllowURL(t *testing.T) {
	var h hits
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		if r.URL.Path == "/a" {
			http.Redirect(w, r, "/b", http.StatusFound)
		}
	}))
	defer srv.Close()
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "no-redirects"})
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: srv.URL + "/a"}})
	testcluster.Eventually(t, "the action to fail", func() bool { return res.count(actions.Failed) == 1 })
	if got := h.get(); len(got) != 1 {
		t.Errorf("server got %q, want only the first request", got)
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
