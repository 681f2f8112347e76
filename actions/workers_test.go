package actions_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/testcluster"
)

// workerGoroutines counts the goroutines of every queue's workers.
func workerGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "actions.(*Queue).worker(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestWorkersStartAsActionsWait: an idle queue holds one worker; actions
// on different objects that wait run on up to Options.Workers at once,
// never more; and once none waits, the queue is back to one worker.
func TestWorkersStartAsActionsWait(t *testing.T) {
	const workers, actionsN = 4, 12
	var mu sync.Mutex
	inFlight, most := 0, 0
	full := make(chan struct{}) // closed when workers requests are in flight at once
	var fullOnce sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == workers {
			fullOnce.Do(func() { close(full) })
		}
		mu.Unlock()
		// Every request waits until the queue has had workers of them
		// in flight at once: with fewer workers started, none would end.
		select {
		case <-full:
		case <-time.After(20 * time.Second):
			http.Error(w, "never had enough requests at once", http.StatusBadRequest)
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	defer srv.Close()
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "workers", Workers: workers, RateLimit: -1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	testcluster.Eventually(t, "one idle worker", func() bool { return workerGoroutines() == 1 })

	for i := range actionsN {
		q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: fmt.Sprintf("%s/%d", srv.URL, i)}})
	}
	testcluster.Eventually(t, "every action to end", func() bool {
		return res.count(actions.Succeeded)+res.count(actions.Failed) == actionsN
	})
	if got := res.count(actions.Succeeded); got != actionsN {
		t.Errorf("%d of %d actions succeeded; the others never saw %d requests at once", got, actionsN, workers)
	}
	mu.Lock()
	if most != workers {
		t.Errorf("at most %d requests at once, want %d (Options.Workers)", most, workers)
	}
	mu.Unlock()
	testcluster.Eventually(t, "one idle worker again", func() bool { return workerGoroutines() == 1 })
}

// TestRetryRunsWhileOtherWorkersAreBusy: with every started worker busy
// and fewer than Workers started, an action that comes back from its
// backoff (the workqueue's delayed add, which starts no worker itself) is
// taken at once, not after the busy ones.
func TestRetryRunsWhileOtherWorkersAreBusy(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		case "/flaky":
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			if first {
				http.Error(w, "try again", http.StatusServiceUnavailable)
				return
			}
			once.Do(func() { close(release) })
		}
	}))
	defer srv.Close()
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "retry-while-busy", Workers: 8, RateLimit: -1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: srv.URL + "/slow"}})
	testcluster.Eventually(t, "the slow action to hold a worker", func() bool { return workerGoroutines() == 2 })
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: srv.URL + "/flaky"}})
	// The slow action ends only once the flaky one's retry has run.
	testcluster.Eventually(t, "both actions to succeed", func() bool { return res.count(actions.Succeeded) == 2 })
	if got := res.count(actions.Retrying); got != 1 {
		t.Errorf("retrying outcomes = %d, want 1", got)
	}
}
