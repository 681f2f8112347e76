package actions_test

import (
	"sync"

	"github.com/kreact/kreact/actions"
)

// results records what a queue reports through OnResult; the unit and the
// e2e tests share it.
type results struct {
	mu   sync.Mutex
	list []actions.Result
}

func (r *results) add(res actions.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, res)
}

func (r *results) count(o actions.Outcome) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, res := range r.list {
		if res.Outcome == o {
			n++
		}
	}
	return n
}
