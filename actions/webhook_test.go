package actions_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/testcluster"
)

// startWebhookQueue runs a queue for HTTP actions only: it has no client, so
// these tests prove that no API server is involved. Its logs go to the
// returned buffer.
func startWebhookQueue(t *testing.T, opts actions.Options) (*actions.Queue, *results, *testcluster.LogBuffer) {
	t.Helper()
	res := &results{}
	logs := &testcluster.LogBuffer{}
	opts.OnResult = res.add
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	opts.BaseDelay = time.Millisecond
	opts.MaxDelay = 20 * time.Millisecond
	q := actions.NewQueue(nil, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = q.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("queue logs:\n%s", logs)
		}
	})
	return q, res, logs
}

// TestUnreachableWebhookUsesTheRetryBudget: a webhook that refuses
// connections, never answers or answers 5xx is retried up to Retries and
// then given up, with log lines naming its URL as a webhook (not the API
// server), while a 4xx is refused at once. None of them waits without end.
func TestUnreachableWebhookUsesTheRetryBudget(t *testing.T) {
	const retries = 3
	tests := []struct {
		name string
		// handler serves the webhook; nil means a server that was closed,
		// so the port refuses connections.
		handler   http.HandlerFunc
		want      actions.Outcome
		wantCalls int32  // -1: not counted
		wantLog   string // the retry message
	}{
		{name: "connection refused", want: actions.GaveUp, wantCalls: -1, wantLog: "webhook unreachable; action will be retried"},
		{name: "no answer within the client timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, want: actions.GaveUp, wantCalls: retries + 1, wantLog: "webhook unreachable; action will be retried"},
		{name: "500", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, want: actions.GaveUp, wantCalls: retries + 1, wantLog: "webhook failing; action will be retried"},
		{name: "429", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, want: actions.GaveUp, wantCalls: retries + 1, wantLog: "webhook failing; action will be retried"},
		{name: "404 is refused for good", handler: func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, want: actions.Failed, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if tt.handler != nil {
					tt.handler(w, r)
				}
			}))
			url := srv.URL + "/hook"
			if tt.handler == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			q, res, logs := startWebhookQueue(t, actions.Options{
				Name:       "webhook",
				Retries:    retries,
				HTTPClient: &http.Client{Timeout: 50 * time.Millisecond},
			})
			q.Enqueue(actions.Action{Rule: "notify", Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: url}})

			testcluster.Eventually(t, "the webhook action to end", func() bool {
				return res.count(actions.GaveUp)+res.count(actions.Failed)+res.count(actions.Succeeded) > 0
			})
			if got := res.count(tt.want); got != 1 {
				t.Errorf("%s outcomes = %d, want 1", tt.want, got)
			}
			if got := res.count(actions.Waiting); got != 0 {
				t.Errorf("%d attempts were waiting as for the API server, want none", got)
			}
			wantRetries := 0
			if tt.want == actions.GaveUp {
				wantRetries = retries
			}
			if got := res.count(actions.Retrying); got != wantRetries {
				t.Errorf("retrying outcomes = %d, want %d", got, wantRetries)
			}
			if tt.wantCalls >= 0 && calls.Load() != tt.wantCalls {
				t.Errorf("webhook called %d times, want %d", calls.Load(), tt.wantCalls)
			}
			st := q.Stats()
			if want := (actions.Stats{Retried: int64(wantRetries), GaveUp: int64(res.count(actions.GaveUp)), Failed: int64(res.count(actions.Failed))}); st != want {
				t.Errorf("stats = %+v, want %+v", st, want)
			}

			if n := logs.Count("API server"); n != 0 {
				t.Errorf("%d log lines blame the API server for a webhook", n)
			}
			if tt.wantLog != "" {
				if n := logs.Count(tt.wantLog, "url="+url); n != retries {
					t.Errorf("%d lines %q naming the URL, want %d", n, tt.wantLog, retries)
				}
				giveUp := strings.SplitN(tt.wantLog, ";", 2)[0] + "; action gave up after retries"
				if n := logs.Count(giveUp, "url="+url); n != 1 {
					t.Errorf("%d lines %q naming the URL, want 1", n, giveUp)
				}
			}
		})
	}
}

// TestWebhookBackWithinRetriesSucceeds: a webhook that fails twice and then
// answers gets the action, once.
func TestWebhookBackWithinRetriesSucceeds(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "starting up", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "webhook-back", Retries: 5})
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: srv.URL}})
	testcluster.Eventually(t, "the webhook action to succeed", func() bool { return res.count(actions.Succeeded) == 1 })
	if got := res.count(actions.Retrying); got != 2 {
		t.Errorf("retrying outcomes = %d, want 2", got)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("webhook called %d times, want 3", got)
	}
}

// TestDownWebhookDoesNotHoldLaterActions: each action to a webhook that
// stays down gets the retry budget and is given up, so the next action to
// the same URL is tried, and the queue ends up empty.
func TestDownWebhookDoesNotHoldLaterActions(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "webhook-down", Retries: 2})
	const n = 3
	for range n {
		q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: url}})
	}
	testcluster.Eventually(t, "every action to be given up", func() bool { return res.count(actions.GaveUp) == n })
	if q.Len() != 0 {
		t.Errorf("%d actions still queued", q.Len())
	}
	if got := res.count(actions.Retrying); got != n*2 {
		t.Errorf("retrying outcomes = %d, want %d", got, n*2)
	}
}
